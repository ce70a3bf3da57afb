/* A thread created with the raw clone(2) system call (no pthread_create, no TLS of its
 * own): it sets its name to "rawworker" and spends about a second of CPU time in
 * rawclone_work; the main thread waits for it on a futex without using CPU.
 * Usage: rawclone [iterations in millions, default 200] */
#include <linux/futex.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#define STACK_SIZE (256 << 10)

static volatile double sink;
static long iterations = 200;
static volatile int child_tid = 1; /* cleared by the kernel when the child exits */

__attribute__((noinline)) static double rawclone_work(long n)
{
	volatile double x = 0; /* volatile: the loop is not folded away */
	for (long i = 0; i < n; i++)
		x += (double)(i % 7) * 0.5;
	return x;
}

static int child_main(void *arg)
{
	(void)arg;
	prctl(PR_SET_NAME, "rawworker", 0, 0, 0);
	for (long i = 0; i < iterations; i++)
		sink += rawclone_work(1000000);
	syscall(SYS_exit, 0); /* this thread only; no libc exit path */
	return 0;
}

int main(int argc, char **argv)
{
	if (argc > 1)
		iterations = atol(argv[1]);
	char *stack = mmap(NULL, STACK_SIZE, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
	if (stack == MAP_FAILED)
		return 1;
	int flags = CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD |
		    CLONE_SYSVSEM | CLONE_CHILD_CLEARTID;
	int tid = clone(child_main, stack + STACK_SIZE, flags, NULL, NULL, NULL, &child_tid);
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
	printf("rawclone done %d\n", tid);
	return 0;
}
