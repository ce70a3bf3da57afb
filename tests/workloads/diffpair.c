/* Two builds of one program for callpath diff: three procedures of equal cost, except that
 * a build with -DBETA_FACTOR=2 makes beta() twice as slow (tests/workloads/CMakeLists.txt
 * builds it as slow/diffpair.O2, under the same name as the normal build). */
#include "common.h"
#include <stdio.h>

#ifndef BETA_FACTOR
#define BETA_FACTOR 1
#endif

volatile uint64_t workload_sink;

NOINLINE void alpha(long n)
{
	workload_sink += spin((uint64_t)n, 1);
}

NOINLINE void beta(long n)
{
	workload_sink += spin((uint64_t)n * BETA_FACTOR, 2);
}

NOINLINE void gamma_(long n)
{
	workload_sink += spin((uint64_t)n, 3);
}

int main(int argc, char **argv)
{
	long n = arg_or(argc, argv, 1, 100000000);
	for (int i = 0; i < 40; i++) { /* interleaved: a change of speed hits all three */
		alpha(n / 40);
		beta(n / 40);
		gamma_(n / 40);
	}
	printf("diffpair done %llu\n", (unsigned long long)(workload_sink & 1));
	return 0;
}
