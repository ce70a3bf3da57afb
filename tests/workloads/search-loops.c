/* `callpath search` test workload: compute() has five loops and the third holds most of
 * the time (about 70 %); main calls it, and a cold function, until SECONDS have passed.
 * With "refuse", main also calls spin_back, a little hotter than compute (~55 % against
 * ~40 %: both far from the 20 % threshold), whose loop jumps back into
 * its first 5 bytes: a function no probe can patch.
 * With "thread", the rounds run in a second thread while main waits for it (the Machine
 * hierarchy: the bottleneck is in that thread, not in main's).
 * With "fork", the rounds run in a forked child while main waits for it (a program that
 * forks a busy worker: the search must search the child, not the waiting parent); the
 * child's pid is said on stderr.
 * With "exec", main first calls only cold() for EXEC_AFTER seconds, then execs PROGRAM (a
 * copy of this one; default itself) to run the rounds for the rest of SECONDS (a new
 * image of the same pid, started after the search began).
 * Usage: search-loops SECONDS [refuse|thread|fork|exec [PROGRAM]] */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define EXEC_AFTER 1.5

volatile double sink;

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

__attribute__((noinline)) double compute(int n)
{
	double a = sink, b = 1.0;
	for (int i = 0; i < n; i++) /* loop 1 */
		a += i * 0.5;
	for (int i = 0; i < n; i++) /* loop 2 */
		b = b * 0.999 + a;
	for (int i = 0; i < 28 * n; i++) /* loop 3: the hot one */
		a = a * 1.0000001 + b / (i + 1.0);
	for (int i = 0; i < n; i++) /* loop 4 */
		b = b * 1.001 - i;
	for (int i = 0; i < n; i++) /* loop 5 */
		a -= b * 1e-9;
	return a + b;
}

/* A loop back to byte 2 of the function (a jump into the bytes a probe would patch). */
__asm__(".text\n.globl spin_back\n.type spin_back,@function\nspin_back:\n"
	" xor %eax,%eax\n1: inc %eax\n dec %edi\n jg 1b\n ret\n.size spin_back,.-spin_back\n");
int spin_back(int n);

__attribute__((noinline)) double cold(int n)
{
	double a = 0;
	for (int i = 0; i < n; i++)
		a += i;
	return a;
}

static double secs;
static int refuse;

static void *rounds(void *arg)
{
	double end = now() + secs;
	long n = 0;
	while (now() < end) {
		sink = compute(20000);
		sink += cold(1000);
		if (refuse)
			sink += spin_back(6000000);
		n++;
	}
	*(long *)arg = n;
	return NULL;
}

/* "exec": cold() for EXEC_AFTER seconds, then this program again for the rest. */
static int exec_later(int argc, char **argv)
{
	char rest[32];
	double end = now() + EXEC_AFTER;
	while (now() < end)
		sink += cold(1000);
	snprintf(rest, sizeof rest, "%.3f", secs - EXEC_AFTER > 0.1 ? secs - EXEC_AFTER : 0.1);
	char *args[] = {argc > 3 ? argv[3] : argv[0], rest, NULL};
	execv(argc > 3 ? argv[3] : "/proc/self/exe", args);
	perror("execv");
	return 1;
}

/* "fork": the rounds in a child; the parent waits. */
static int fork_worker(long *n)
{
	int status = 0;
	pid_t pid = fork();
	if (pid < 0)
		return 1;
	if (!pid) {
		rounds(n);
		printf("%ld rounds\n", *n);
		exit(0);
	}
	fprintf(stderr, "search-loops: worker %d of %d\n", (int)pid, (int)getpid());
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

int main(int argc, char **argv)
{
	long n = 0;
	pthread_t t;
	secs = argc > 1 ? atof(argv[1]) : 5;
	refuse = argc > 2 && !strcmp(argv[2], "refuse");
	if (argc > 2 && !strcmp(argv[2], "exec"))
		return exec_later(argc, argv);
	if (argc > 2 && !strcmp(argv[2], "fork"))
		return fork_worker(&n);
	if (argc > 2 && !strcmp(argv[2], "thread")) {
		pthread_create(&t, NULL, rounds, &n);
		pthread_join(t, NULL);
	} else
		rounds(&n);
	printf("%ld rounds\n", n);
	return 0;
}
