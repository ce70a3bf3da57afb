/* Workload for tests/e2e/probe-loops-wait.sh: samples below and inside a relocated
 * (loop-probed) function. work()'s loop waits on a condition variable itself (the wait
 * trigger's call site is in the relocated copy), calls burn() (CPU time below the copy)
 * and runs a short inner loop (timer samples land in the copy and its edge snippets).
 * A ticker thread signals the condition every 2 ms.
 *   loopwait PIDFILE GOFILE SECONDS [INNER]
 * Writes its pid, waits for GOFILE (the test inserts the loop probes meanwhile), then
 * calls work() until SECONDS have passed and prints "rounds N". INNER: the inner loop's
 * iterations per round (20000). PIDFILE "-": neither
 * (tests/e2e/search-loopwait.sh). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline, aligned(16)))

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int ticks, done, inner = 20000;
static volatile double sink;

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void *ticker(void *arg)
{
	(void)arg;
	for (;;) {
		usleep(2000);
		pthread_mutex_lock(&mu);
		ticks++;
		pthread_cond_signal(&cv);
		int end = done;
		pthread_mutex_unlock(&mu);
		if (end)
			return NULL;
	}
}

NOINLINE double burn(int n)
{
	double a = sink;
	for (int i = 0; i < n; i++)
		a = a * 1.0000001 + i;
	return a;
}

NOINLINE double work(int n)
{
	double s = 0;
	for (int i = 0; i < n; i++) {
		pthread_mutex_lock(&mu);
		int t = ticks;
		while (ticks == t)
			pthread_cond_wait(&cv, &mu);
		pthread_mutex_unlock(&mu);
		s += burn(300000);
		for (int j = 0; j < inner; j++)
			s = s * 0.99999 + j;
	}
	return s;
}

int main(int argc, char **argv)
{
	struct stat st;
	pthread_t t;
	if (argc != 4 && argc != 5)
		return 2;
	if (argc == 5)
		inner = atoi(argv[4]);
	pthread_create(&t, NULL, ticker, NULL);
	FILE *f = strcmp(argv[1], "-") ? fopen(argv[1], "w") : NULL;
	if (f) {
		fprintf(f, "%d\n", (int)getpid());
		fclose(f);
		while (stat(argv[2], &st) != 0)
			usleep(1000);
	}
	double end = now() + atof(argv[3]);
	long rounds = 0;
	while (now() < end) {
		sink += work(10);
		rounds++;
	}
	pthread_mutex_lock(&mu);
	done = 1;
	pthread_mutex_unlock(&mu);
	pthread_join(t, NULL);
	printf("rounds %ld\n", rounds);
	return 0;
}
