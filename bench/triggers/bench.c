/* Per-call cost of the synchronous triggers: ns per malloc+free pair, per read and per
 * write, and per contended-free mutex lock, from one fixed calling context at a given
 * stack depth, in thread CPU time (bench/triggers/run.sh runs it plain, preloaded with the family off, and
 * with -e alloc / -e io / -e wait). Usage: bench [ITERATIONS] [DEPTH] */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static void *volatile sink;

/* Thread CPU time, not wall-clock: on a shared VM the wall clock counts the time this
 * thread waited for a CPU. */
static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

__attribute__((noinline)) static double bench_malloc(long n)
{
	double t0 = now_ns();
	for (long i = 0; i < n; i++) {
		void *p = malloc(64);
		sink = p;
		free(p);
	}
	return (now_ns() - t0) / n;
}

__attribute__((noinline)) static double bench_read(long n, int fd)
{
	char c;
	double t0 = now_ns();
	for (long i = 0; i < n; i++)
		if (read(fd, &c, 1) != 1)
			exit(2);
	return (now_ns() - t0) / n;
}

__attribute__((noinline)) static double bench_write(long n, int fd)
{
	char c = 0;
	double t0 = now_ns();
	for (long i = 0; i < n; i++)
		if (write(fd, &c, 1) != 1)
			exit(3);
	return (now_ns() - t0) / n;
}

__attribute__((noinline)) static double bench_lock(long n)
{
	static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	double t0 = now_ns();
	for (long i = 0; i < n; i++) {
		pthread_mutex_lock(&m);
		pthread_mutex_unlock(&m);
	}
	return (now_ns() - t0) / n;
}

static long iters;

__attribute__((noinline)) static void run(void)
{
	int zero = open("/dev/zero", O_RDONLY), null = open("/dev/null", O_WRONLY);
	bench_malloc(iters / 10); /* warm up: caches, CCT nodes */
	bench_read(iters / 10, zero);
	bench_write(iters / 10, null);
	double m = 1e30, r = 1e30, w = 1e30, l = 1e30;
	for (int rep = 0; rep < 5; rep++) { /* best of 5 */
		double x;
		if ((x = bench_malloc(iters)) < m)
			m = x;
		if ((x = bench_read(iters, zero)) < r)
			r = x;
		if ((x = bench_write(iters, null)) < w)
			w = x;
		if ((x = bench_lock(iters)) < l)
			l = x;
	}
	printf("malloc+free %.1f ns  read %.1f ns  write %.1f ns  mutex lock+unlock %.1f ns\n", m,
	       r, w, l);
}

/* Nest the calls DEPTH frames deep: the unwind cost grows with the depth. */
__attribute__((noinline)) static void nest(int depth)
{
	if (depth > 0)
		nest(depth - 1);
	else
		run();
	sink = &depth;
}

int main(int argc, char **argv)
{
	iters = argc > 1 ? atol(argv[1]) : 1000000;
	nest(argc > 2 ? atoi(argv[2]) : 0);
	return 0;
}
