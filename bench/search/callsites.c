/* Planted: one of two call sites of the same function is hot. blend() is called from
 * prepare_input() with n = N / 2 and from integrate() with n = 8 N: the call path
 * main -> integrate -> blend holds about 85 % of the CPU time, main -> prepare_input ->
 * blend about 10 %. A search must name blend through integrate, not prepare_input. */
#include "planted.h"

#define N 2048

static double v[8 * N];
volatile double planted_sink;

NOINLINE static double blend(double *x, int n, double w)
{
	double s = 0;
	/* planted: begin */
	for (int i = 1; i < n; i++) {
		x[i] = x[i] * (1 - w) + x[i - 1] * w;
		s += x[i] * x[i];
	}
	/* planted: end */
	return s;
}

NOINLINE static double prepare_input(void)
{
	return blend(v, N / 2, 0.1) + (double)spin(N / 4, 3);
}

NOINLINE static double integrate(void)
{
	double s = blend(v, 8 * N, 0.3);
	return s * 0.5 + v[3]; /* work after the call: no tail call, integrate keeps its frame */
}

int main(int argc, char **argv)
{
	double secs = planted_seconds(argc, argv), start = planted_now();
	for (int i = 0; i < 8 * N; i++)
		v[i] = (i % 17) * 0.25 + 1; /* never near 0: no denormals */
	long rounds = 0;
	double s = 0;
	while (planted_now() - start < secs) {
		s += prepare_input();
		s += integrate();
		rounds++;
	}
	planted_sink = s;
	planted_done("callsites", rounds, start);
	return 0;
}
