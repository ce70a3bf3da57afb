/* Planted: deep recursion. descend() recurses 2,000 levels deep and works a little at
 * every level: about 85 % of the CPU time is in descend frames, on call paths 2,000
 * frames long (the unwinder's and the search's depth limits are in play). tally() is the
 * cold rest. */
#include "planted.h"

#define DEPTH 2000

static volatile uint64_t sink;

NOINLINE static uint64_t descend(int depth, uint64_t x)
{
	/* planted: begin */
	x = spin(400, x);
	if (depth > 0)
		x = descend(depth - 1, x) + 1;
	/* planted: end */
	__asm__ volatile("" : "+r"(x)); /* no tail call: the frames stay on the stack */
	return x;
}

NOINLINE static uint64_t tally(uint64_t x)
{
	return spin(DEPTH * 60, x);
}

int main(int argc, char **argv)
{
	double secs = planted_seconds(argc, argv), start = planted_now();
	long rounds = 0;
	uint64_t x = 11;
	while (planted_now() - start < secs) {
		x = descend(DEPTH, x);
		x = tally(x);
		rounds++;
	}
	sink = x;
	planted_done("recursion", rounds, start);
	return 0;
}
