/* A thread created with the raw clone(2) system call (no pthread_create, no TLS of its
 * own): it sets its name to "rawworker" and spends about a second of CPU time in
 * rawclone_work; the main thread waits for it on a futex without using CPU.
 * With RAWCLONE_EARLY=1 the thread starts in a .preinit_array function, before any shared
 * library's constructor (a profiler's included): it is already running at its init.
 * With RAWCLONE_SLEEP=1 the thread instead waits about a second in rawclone_wait (raw
 * nanosleep calls, no CPU).
 * Usage: rawclone [iterations in millions, default 200] */
#include <linux/futex.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define STACK_SIZE (256 << 10)

static volatile double sink;
static long iterations = 200;
static volatile int child_tid = 1; /* cleared by the kernel when the child exits */
static volatile int named;         /* the child has set its name */
static int started_tid;

__attribute__((noinline)) static double rawclone_work(long n)
{
	volatile double x = 0; /* volatile: the loop is not folded away */
	for (long i = 0; i < n; i++)
		x += (double)(i % 7) * 0.5;
	return x;
}

static int sleeper;

/* About 1 s of waiting in 10 ms naps (a nap cut short by a signal is not resumed). */
__attribute__((noinline)) static void rawclone_wait(void)
{
	struct timespec start, now, nap = {0, 10000000};
	clock_gettime(CLOCK_MONOTONIC, &start);
	do {
		syscall(SYS_nanosleep, &nap, NULL);
		clock_gettime(CLOCK_MONOTONIC, &now);
	} while ((now.tv_sec - start.tv_sec) * 1000000000L + (now.tv_nsec - start.tv_nsec) <
		 1000000000L);
}

static int child_main(void *arg)
{
	(void)arg;
	prctl(PR_SET_NAME, "rawworker", 0, 0, 0);
	named = 1;
	if (sleeper)
		rawclone_wait();
	for (long i = 0; i < iterations && !sleeper; i++)
		sink += rawclone_work(1000000);
	syscall(SYS_exit, 0); /* this thread only; no libc exit path */
	return 0;
}

static int start_worker(void)
{
	char *stack = mmap(NULL, STACK_SIZE, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
	if (stack == MAP_FAILED)
		return -1;
	int flags = CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD |
		    CLONE_SYSVSEM | CLONE_CHILD_CLEARTID;
	int tid = clone(child_main, stack + STACK_SIZE, flags, NULL, NULL, NULL, &child_tid);
	while (tid > 0 && !named)
		; /* its name is set before anyone looks at it */
	return tid;
}

static void early_start(int argc, char **argv, char **envp)
{
	int early = 0;
	for (char **e = envp; e && *e; e++)
		early |= !strcmp(*e, "RAWCLONE_EARLY=1");
	if (!early)
		return;
	if (argc > 1)
		iterations = atol(argv[1]);
	started_tid = start_worker();
}

__attribute__((section(".preinit_array"), used)) static void (*const preinit)(int, char **,
									       char **) =
	early_start;

int main(int argc, char **argv)
{
	if (argc > 1)
		iterations = atol(argv[1]);
	const char *sl = getenv("RAWCLONE_SLEEP");
	sleeper = sl && *sl == '1';
	int tid = started_tid ? started_tid : start_worker();
	if (tid < 0) {
		perror("clone");
		return 1;
	}
	/* Wait until the kernel clears child_tid at the child's exit (no CPU used). */
	while (child_tid) {
		int v = child_tid;
		if (v)
			syscall(SYS_futex, &child_tid, FUTEX_WAIT, v, NULL, NULL, 0);
	}
	printf("rawclone done %d%s\n", tid, started_tid ? " (early)" : "");
	return 0;
}
