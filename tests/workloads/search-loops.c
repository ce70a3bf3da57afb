/* `callpath search` test workload: compute() has five loops and the third holds most of
 * the time (about 70 %); main calls it, and a cold function, until SECONDS have passed.
 * Usage: search-loops SECONDS */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

volatile double sink;

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

__attribute__((noinline)) double compute(int n)
{
	double a = sink, b = 1.0;
	for (int i = 0; i < n; i++) /* loop 1 */
		a += i * 0.5;
	for (int i = 0; i < n; i++) /* loop 2 */
		b = b * 0.999 + a;
	for (int i = 0; i < 28 * n; i++) /* loop 3: the hot one */
		a = a * 1.0000001 + b / (i + 1.0);
	for (int i = 0; i < n; i++) /* loop 4 */
		b = b * 1.001 - i;
	for (int i = 0; i < n; i++) /* loop 5 */
		a -= b * 1e-9;
	return a + b;
}

__attribute__((noinline)) double cold(int n)
{
	double a = 0;
	for (int i = 0; i < n; i++)
		a += i;
	return a;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 5, end = now() + secs;
	long rounds = 0;
	while (now() < end) {
		sink = compute(20000);
		sink += cold(1000);
		rounds++;
	}
	printf("%ld rounds\n", rounds);
	return 0;
}
