/* The shared library that dlopen.c loads at run time: kernel_apply() holds the planted hot
 * loop (about 80 % of the program's CPU time). */
#include <stdint.h>

__attribute__((visibility("default"))) double kernel_apply(double *x, int n, int sweeps)
{
	double s = 0;
	for (int k = 0; k < sweeps; k++) {
		/* planted: begin */
		for (int i = 2; i < n - 2; i++) {
			x[i] = 0.2 * (x[i - 2] + x[i - 1] + x[i] + x[i + 1] + x[i + 2]) + 1e-9 * k;
			s += x[i];
		}
		/* planted: end */
	}
	return s;
}
