/* Loop-heavy workload for the sampling-overhead benchmark: naive i-j-k matrix product
 * repeated R times, almost all time in one loop nest of one function (shallow stacks).
 * Usage: loops [N [R]] (default 600 7). */
#include <stdio.h>
#include <stdlib.h>

static void fill(double *m, int n, unsigned seed)
{
	for (int i = 0; i < n * n; i++) {
		seed = seed * 1103515245u + 12345u;
		m[i] = (double)(seed >> 16) / 65536.0;
	}
}

__attribute__((noinline)) static void product(const double *a, const double *b, double *c, int n)
{
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++) {
			double s = 0;
			for (int k = 0; k < n; k++)
				s += a[i * n + k] * b[k * n + j];
			c[i * n + j] = s;
		}
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 600;
	int reps = argc > 2 ? atoi(argv[2]) : 7;
	double *a = malloc(sizeof(double) * n * n), *b = malloc(sizeof(double) * n * n);
	double *c = malloc(sizeof(double) * n * n);
	if (!a || !b || !c)
		return 1;
	fill(a, n, 1);
	fill(b, n, 2);
	double sum = 0;
	for (int r = 0; r < reps; r++) {
		product(a, b, c, n);
		sum += c[(r * 7) % (n * n)];
	}
	printf("loops %d x%d: %.6f\n", n, reps, sum);
	free(a);
	free(b);
	free(c);
	return 0;
}
