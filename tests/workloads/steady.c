/* A steady profile for as long as it is watched (tests/e2e/attach-*.sh): for argv[1]
 * seconds (default 30), argv[2] threads (default 2) each call three() and one() in turn,
 * three() doing three times one()'s work: 75% / 25% of the CPU time, at any moment.
 * Creates the file argv[3] (if given) once running; SIGTERM ends it early. Prints
 * "steady done" and exits with status argv[4] (default 0). */
#include "common.h"
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

volatile uint64_t workload_sink;
static volatile sig_atomic_t stop;
static double seconds;

static void on_term(int sig)
{
	(void)sig;
	stop = 1;
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

NOINLINE uint64_t one(uint64_t seed)
{
	return spin(100000, seed);
}

NOINLINE uint64_t three(uint64_t seed)
{
	return spin(300000, seed);
}

static void *worker(void *arg)
{
	double end = now() + seconds;
	uint64_t x = (uintptr_t)arg;

	while (!stop && now() < end)
		x += three(x) + one(x);
	workload_sink += x;
	return NULL;
}

int main(int argc, char **argv)
{
	long nthreads = arg_or(argc, argv, 2, 2);
	pthread_t t[64];

	seconds = (double)arg_or(argc, argv, 1, 30);
	signal(SIGTERM, on_term);
	if (nthreads < 1 || nthreads > 64)
		nthreads = 2;
	for (long i = 1; i < nthreads; i++)
		pthread_create(&t[i], NULL, worker, (void *)(uintptr_t)i);
	if (argc > 3)
		close(open(argv[3], O_CREAT | O_WRONLY, 0644));
	worker(NULL);
	for (long i = 1; i < nthreads; i++)
		pthread_join(t[i], NULL);
	printf("steady done\n");
	return (int)arg_or(argc, argv, 4, 0);
}
