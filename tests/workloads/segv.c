/* Works in before_crash(), then dereferences a null pointer and dies with SIGSEGV. */
#include "common.h"
#include <stdio.h>

volatile uint64_t workload_sink;
int *volatile null_pointer;

NOINLINE void before_crash(void)
{
	workload_sink += spin(300000000, 2);
}

int main(void)
{
	before_crash();
	fflush(stdout);
	return *null_pointer;
}
