/* The frame of the timed workloads (steady.c, mallocbusy.c): for argv[1] seconds (default
 * 30), or until SIGTERM, argv[2] threads (the main one included; the workload gives the
 * default) each run the workload's worker(i), which polls `stop` and now() against
 * `seconds`. Creates the file argv[3] (if given) once running, prints "NAME done" and exits
 * with status argv[4] (default 0). */
#ifndef CP_WORKLOAD_TIMED_H
#define CP_WORKLOAD_TIMED_H

#include "common.h"
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

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

static int timed_main(int argc, char **argv, long default_threads, void *(*worker)(void *),
		      const char *name)
{
	long nthreads = arg_or(argc, argv, 2, default_threads);
	pthread_t t[64];

	seconds = (double)arg_or(argc, argv, 1, 30);
	signal(SIGTERM, on_term);
	if (nthreads < 1 || nthreads > 64)
		nthreads = default_threads;
	for (long i = 1; i < nthreads; i++)
		pthread_create(&t[i], NULL, worker, (void *)(uintptr_t)i);
	if (argc > 3)
		close(open(argv[3], O_CREAT | O_WRONLY, 0644));
	worker(NULL);
	for (long i = 1; i < nthreads; i++)
		pthread_join(t[i], NULL);
	printf("%s done\n", name);
	return (int)arg_or(argc, argv, 4, 0);
}

#endif
