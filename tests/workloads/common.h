/* Shared helpers of the test workloads: a unit of CPU work the optimizer cannot remove. */
#ifndef CP_WORKLOAD_COMMON_H
#define CP_WORKLOAD_COMMON_H

#include <stdint.h>
#include <stdlib.h>

#define NOINLINE __attribute__((noinline))

extern volatile uint64_t workload_sink;

/* About 1 ns per iteration; the multiply chain keeps it from vectorizing away. */
static inline uint64_t spin(uint64_t n, uint64_t seed)
{
	uint64_t x = seed | 1;
	for (uint64_t i = 0; i < n; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		__asm__ volatile("" : "+r"(x));
	}
	return x;
}

static inline long arg_or(int argc, char **argv, int i, long dflt)
{
	return argc > i ? strtol(argv[i], NULL, 0) : dflt;
}

#endif
