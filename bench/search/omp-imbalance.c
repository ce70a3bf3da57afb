/* Planted: OpenMP load imbalance. relax() runs a parallel loop with a static schedule
 * whose iteration i costs in proportion to i: with 2 threads the second thread gets about
 * three quarters of the work, and the first waits at the loop's implicit barrier for
 * about half of every region. The imbalanced loop is the one between the markers;
 * finish() is a balanced cold loop. */
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
		total += spin(100 + 200 * (uint64_t)i, seed + (uint64_t)i);
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
