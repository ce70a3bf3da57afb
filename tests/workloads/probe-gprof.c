/* Workload for tests/e2e/gprof-counts.sh, built with and without -pg: a call graph with
 * known arc counts (no tail calls, every function long enough to be patched):
 *   main -> fa 3, main -> fc 7, fa -> fb 30 (10 per fa), fa -> fc 15, fb -> fc 60,
 *   fb -> fd 30 (through a pointer) */
#include <stdio.h>

#define NOINLINE __attribute__((noinline))

static volatile unsigned long sink;

static void spin(unsigned long n)
{
	unsigned long x = sink | 1;
	for (unsigned long i = 0; i < n; i++) {
		x = x * 6364136223846793005ul + 1442695040888963407ul;
		__asm__ volatile("" : "+r"(x));
	}
	sink += x;
}

NOINLINE void fd(int i)
{
	spin(20000 + (unsigned long)i);
	sink += 1;
}

void (*volatile fd_ptr)(int) = fd;

NOINLINE void fc(int i)
{
	spin(30000 + (unsigned long)i);
	sink += 2;
}

NOINLINE void fb(int i)
{
	fc(i);
	fc(i + 1);
	fd_ptr(i);
	spin(50000);
	sink += 3;
}

NOINLINE void fa(int i)
{
	for (int k = 0; k < 10; k++)
		fb(i + k);
	for (int k = 0; k < 5; k++)
		fc(k);
	spin(100000);
	sink += 4;
}

int main(void)
{
	for (int i = 0; i < 3; i++)
		fa(i);
	for (int i = 0; i < 7; i++)
		fc(i);
	printf("probe-gprof %lu\n", sink & 0xff);
	return 0;
}
