/* Shared helpers of the planted-bottleneck programs (bench/search/README.md).
 *
 * Every program runs rounds of the same mix of work until the number of seconds given as
 * its first argument (default 2) has passed, then prints on stderr
 *     planted: NAME rounds=N seconds=S
 * so that the runner can compute the program's speed (rounds per second) with and without
 * instrumentation: the slowdown of a time-bounded program is the drop of its rate. */
#ifndef CP_PLANTED_H
#define CP_PLANTED_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define NOINLINE __attribute__((noinline))

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

/* About 1 ns per iteration; the multiply chain keeps it from vectorizing away. */
static inline uint64_t planted_spin(uint64_t n, uint64_t seed)
{
	uint64_t x = seed | 1;
	for (uint64_t i = 0; i < n; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		__asm__ volatile("" : "+r"(x));
	}
	return x;
}

static inline void planted_done(const char *name, long rounds, double start)
{
	fprintf(stderr, "planted: %s rounds=%ld seconds=%.3f\n", name, rounds,
		planted_now() - start);
}

#endif
