/* main -> run -> {heavy3, light1}: heavy3 costs 3x light1 (a 3:1 split by construction). */
#include "common.h"
#include <stdio.h>

volatile uint64_t workload_sink;

NOINLINE void heavy3(uint64_t units)
{
	workload_sink += spin(3 * units, 3);
}

NOINLINE void light1(uint64_t units)
{
	workload_sink += spin(units, 1);
}

NOINLINE void run(long rounds)
{
	for (long r = 0; r < rounds; r++) {
		heavy3(100000);
		light1(100000);
	}
}

int main(int argc, char **argv)
{
	run(arg_or(argc, argv, 1, 2000));
	printf("chain done %llu\n", (unsigned long long)(workload_sink & 1));
	return 0;
}
