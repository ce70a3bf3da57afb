/* Planted: an inlined hot loop. smooth() is always inlined into relax_grid(); its loop
 * holds about 80 % of the CPU time, checksum() (not inlined) the rest. The loop exists in
 * the binary only inside relax_grid's code: a search must name it by smooth's lines. */
#include "planted.h"

#define N 8192

static double grid[N];
volatile double planted_sink;

static inline __attribute__((always_inline)) double smooth(double *x, int n, double w)
{
	double s = 0;
	/* planted: begin */
	for (int i = 1; i < n - 1; i++) {
		x[i] = (1 - w) * x[i] + w * 0.5 * (x[i - 1] + x[i + 1]);
		s += x[i];
	}
	/* planted: end */
	return s;
}

NOINLINE static double checksum(const double *x, int n)
{
	double s = 0;
	for (int i = 0; i < n; i++)
		s += x[i] * (i & 3);
	return s;
}

NOINLINE static double relax_grid(int sweeps)
{
	double s = 0;
	for (int k = 0; k < sweeps; k++)
		s += smooth(grid, N, 0.25 + k * 1e-3);
	return s + checksum(grid, N);
}

int main(int argc, char **argv)
{
	double secs = planted_seconds(argc, argv), start = planted_now();
	for (int i = 0; i < N; i++)
		grid[i] = (i * 7919) % 101;
	long rounds = 0;
	double s = 0;
	while (planted_now() - start < secs) {
		s += relax_grid(4);
		rounds++;
	}
	planted_sink = s;
	planted_done("inlined", rounds, start);
	return 0;
}
