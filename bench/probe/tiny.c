/* The probe benchmark's workload: a tiny function called N times from one loop. */
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) int work(int x)
{
	__asm__ volatile("" : "+r"(x));
	return x * 3 + 1;
}

__attribute__((noinline)) int unprobed(int x)
{
	__asm__ volatile("" : "+r"(x));
	return x * 5 + 2;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 10000000L;
	int which = argc > 2 ? atoi(argv[2]) : 0;
	long s = 0;
	for (long i = 0; i < n; i++)
		s += which ? unprobed((int)i) : work((int)i);
	printf("%ld\n", s);
	return 0;
}
