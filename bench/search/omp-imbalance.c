/* Planted: OpenMP load imbalance. relax() runs a parallel loop with a static schedule
 * whose iteration i costs in proportion to i squared: with 2 threads the second thread
 * gets about seven eighths of the work, and the first waits at the loop's implicit barrier
 * for about six sevenths of every region (some 40 % of the two threads' time in relax).
 * (Until 2026-11-27 the cost grew as i: a 3:1 split whose wait, about 22 % of the time,
 * sat on the 20 % threshold and was missed in 1 run of 2 or 3.) The imbalanced loop is
 * the one between the markers; finish() is a balanced cold loop. */
#include "planted.h"
#include <omp.h>

#define ITEMS 512

static volatile uint64_t sink;

NOINLINE static uint64_t relax(uint64_t seed)
{
	uint64_t total = 0;
	/* planted: begin */
#pragma omp parallel for schedule(static) reduction(+ : total)
	for (int i = 0; i < ITEMS; i++)
		total += spin(100 + (uint64_t)i * (uint64_t)i / 2, seed + (uint64_t)i);
	/* planted: end */
	return total;
}

NOINLINE static uint64_t finish(uint64_t seed)
{
	uint64_t total = 0;
#pragma omp parallel for schedule(static) reduction(+ : total)
	for (int i = 0; i < 64; i++)
		total += spin(50000, seed + (uint64_t)i);
	return total;
}

int main(int argc, char **argv)
{
	double secs = planted_seconds(argc, argv), start = planted_now();
	long rounds = 0;
	uint64_t x = 3;
	while (planted_now() - start < secs) {
		x = relax(x);
		x += finish(x);
		rounds++;
	}
	sink = x;
	planted_done("omp-imbalance", rounds, start);
	return 0;
}
