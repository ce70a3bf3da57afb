/* Per-call cost of an uncontended pthread_mutex_lock + pthread_mutex_unlock pair, in
 * thread CPU time (bench/interpose/run.sh runs it alone and under `callpath record -e
 * cputime`, where no trigger family is on). Prints the best of 5 repetitions of
 * ITERATIONS pairs after a warm-up. Usage: bench [ITERATIONS] */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

__attribute__((noinline)) static double lock_pairs(long n)
{
	double t0 = now_ns();
	for (long i = 0; i < n; i++) {
		pthread_mutex_lock(&lock);
		pthread_mutex_unlock(&lock);
	}
	return (now_ns() - t0) / n;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 5000000;
	double best = lock_pairs(n / 10 + 1);
	for (int rep = 0; rep < 5; rep++) {
		double ns = lock_pairs(n);
		if (ns < best || rep == 0)
			best = ns;
	}
	printf("%.2f ns\n", best);
	return 0;
}
