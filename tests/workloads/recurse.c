/* Deep recursion: descend(depth) does a little work at every level and most at the bottom.
 * Inclusive time of descend must not exceed 100% however deep the recursion. */
#include "common.h"
#include <stdio.h>

volatile uint64_t workload_sink;

NOINLINE uint64_t bottom(uint64_t units)
{
	return spin(units, 7);
}

NOINLINE uint64_t descend(int depth, uint64_t units)
{
	uint64_t r = spin(units / 50, depth);
	if (depth > 0)
		r += descend(depth - 1, units);
	else
		r += bottom(units);
	__asm__ volatile("" ::: "memory"); /* keep the call from becoming a loop */
	return r;
}

int main(int argc, char **argv)
{
	long rounds = arg_or(argc, argv, 1, 400);
	int depth = (int)arg_or(argc, argv, 2, 200);
	for (long i = 0; i < rounds; i++)
		workload_sink += descend(depth, 500000);
	printf("recurse done %llu\n", (unsigned long long)(workload_sink & 1));
	return 0;
}
