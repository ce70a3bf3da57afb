/* Call-heavy workload for the sampling-overhead benchmark: a doubly recursive function
 * whose every call also goes through a noinline helper, so stacks are deep (~n frames) and
 * change all the time. Usage: calls [N] (default 41). Prints a checksum so the compiler
 * cannot drop the work. */
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) static unsigned long blend(unsigned long a, unsigned long b)
{
	/* a little arithmetic so the helper is not free; the asm keeps it out of line */
	unsigned long r = a * 31u + (b ^ (b >> 3));
	__asm__ volatile("" : "+r"(r));
	return r;
}

__attribute__((noinline)) static unsigned long walk(int n)
{
	if (n < 2)
		return (unsigned long)n + 1;
	return blend(walk(n - 1), walk(n - 2));
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 41;
	printf("calls %d: %lu\n", n, walk(n));
	return 0;
}
