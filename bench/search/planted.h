/* Shared helpers of the planted-bottleneck programs (bench/search/README.md).
 *
 * Every program runs rounds of the same mix of work until the number of seconds given as
 * its first argument (default 2) has passed, then prints on stderr
 *     planted: NAME rounds=N seconds=S
 * so that the runner can compute the program's speed (rounds per second) with and without
 * instrumentation: the slowdown of a time-bounded program is the drop of its rate. */
#ifndef CP_PLANTED_H
#define CP_PLANTED_H

#include "common.h" /* tests/workloads: NOINLINE, spin() (about 1 ns per iteration) */
#include <stdio.h>
#include <time.h>

static inline double planted_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static inline double planted_seconds(int argc, char **argv)
{
	double s = argc > 1 ? strtod(argv[1], NULL) : 2.0;
	return s > 0 && s < 3600 ? s : 2.0;
}

static inline void planted_done(const char *name, long rounds, double start)
{
	fprintf(stderr, "planted: %s rounds=%ld seconds=%.3f\n", name, rounds,
		planted_now() - start);
}

#endif
