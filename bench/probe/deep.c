/* Deep recursion under callpath probe (bench/probe/deep.sh): descend() recurses DEPTH levels
 * deep, a little work per level, until CALLS calls were made; prints the wall time per call.
 *   deep DEPTH CALLS */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile uint64_t sink;

__attribute__((noinline)) static uint64_t descend(int depth, uint64_t x)
{
	for (int i = 0; i < 40; i++)
		x = x * 6364136223846793005ull + 1442695040888963407ull;
	if (depth > 0)
		x = descend(depth - 1, x) + 1;
	__asm__ volatile("" : "+r"(x)); /* no tail call: the frames stay on the stack */
	return x;
}

int main(int argc, char **argv)
{
	if (argc != 3)
		return 2;
	int depth = atoi(argv[1]);
	long calls = atol(argv[2]);
	struct timespec a, b;
	uint64_t x = 1;
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (long n = 0; n < calls; n += depth + 1)
		x = descend(depth, x);
	clock_gettime(CLOCK_MONOTONIC, &b);
	sink = x;
	printf("%.1f\n", ((double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec)) /
			     (double)calls);
	return 0;
}
