/* Planted: the hot loop is the innermost of a 3-deep nest. In stencil(), the row loop
 * holds two inner loops: a cheap boundary fix-up and the column loop, which holds the hot
 * innermost loop (the 5-point update repeated over the components); it carries about
 * 85 % of the CPU time. A search must refine function -> outer loop -> inner loop. */
#include "planted.h"

#define R 128
#define C 128
#define K 4

static double u[R][C][K], w[R][C][K];
static volatile int components = K; /* not a constant: the inner loop stays a loop */
volatile double planted_sink;

NOINLINE static double stencil(void)
{
	double s = 0;
	int nk = components;
	for (int r = 1; r < R - 1; r++) {
		for (int k = 0; k < K; k++) { /* boundary fix-up: cold */
			w[r][0][k] = u[r][1][k];
			w[r][C - 1][k] = u[r][C - 2][k];
		}
		for (int c = 1; c < C - 1; c++) {
			/* planted: begin */
			for (int k = 0; k < nk; k++) {
				double v = 0.25 * (u[r - 1][c][k] + u[r + 1][c][k] +
						   u[r][c - 1][k] + u[r][c + 1][k]);
				w[r][c][k] = v / (1.0 + v * v);
				s += w[r][c][k];
			}
			/* planted: end */
		}
	}
	return s;
}

NOINLINE static void swap_grids(void)
{
	for (int r = 0; r < R; r++)
		for (int c = 0; c < C; c++)
			for (int k = 0; k < K; k++)
				u[r][c][k] = w[r][c][k] * 0.999 + 1e-3;
}

int main(int argc, char **argv)
{
	double secs = planted_seconds(argc, argv), start = planted_now();
	for (int r = 0; r < R; r++)
		for (int c = 0; c < C; c++)
			for (int k = 0; k < K; k++)
				u[r][c][k] = (r * c + k) % 7;
	long rounds = 0;
	double s = 0;
	while (planted_now() - start < secs) {
		s += stencil();
		s += stencil();
		swap_grids();
		rounds++;
	}
	planted_sink = s;
	planted_done("nested", rounds, start);
	return 0;
}
