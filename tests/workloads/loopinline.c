/* A hot loop inside an always-inlined function, inlined into a caller inside another loop:
 * at -O2 the profile must show compute -> loop (outer) -> inlined kernel -> loop (inner)
 * -> statement. tests/e2e/analyze-loops.sh finds the lines by the MARK comments.
 * Argument: outer iterations (default 3000, about 0.6 s). */
#include "common.h"

#include <stdio.h>

volatile uint64_t workload_sink;

static inline __attribute__((always_inline)) uint64_t kernel(uint64_t seed, uint64_t n)
{
	uint64_t x = seed | 1;
	for (uint64_t i = 0; i < n; i++) {				 /* MARK:inner-loop */
		x = x * 6364136223846793005ull + 1442695040888963407ull; /* MARK:inner-body */
		__asm__ volatile("" : "+r"(x));
	}
	return x;
}

NOINLINE uint64_t compute(long outer)
{
	uint64_t r = 0;
	for (long j = 0; j < outer; j++) {	  /* MARK:outer-loop */
		r += kernel((uint64_t)j, 200000); /* MARK:inline-call */
		r ^= r >> 7;
	}
	return r;
}

int main(int argc, char **argv)
{
	long outer = arg_or(argc, argv, 1, 3000);
	workload_sink = compute(outer); /* MARK:main-call */
	printf("loopinline %llu\n", (unsigned long long)(workload_sink & 1));
	return 0;
}
