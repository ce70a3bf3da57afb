/* One helper, two callers, very different costs (the case gprof gets wrong):
 * light() calls work(10) 9N times (10% of the work), heavy() calls work(810) N times (90%). */
#include "common.h"
#include <stdio.h>

volatile uint64_t workload_sink;

NOINLINE uint64_t work(uint64_t n)
{
	return spin(n * 8, n);
}

NOINLINE void light(long n)
{
	for (long i = 0; i < 9 * n; i++)
		workload_sink += work(10);
}

NOINLINE void heavy(long n)
{
	for (long i = 0; i < n; i++)
		workload_sink += work(810);
}

int main(int argc, char **argv)
{
	long n = arg_or(argc, argv, 1, 100000);
	light(n);
	heavy(n);
	printf("callers done %llu\n", (unsigned long long)(workload_sink & 1));
	return 0;
}
