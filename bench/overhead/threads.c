/* Threaded workload for the sampling-overhead benchmark: two worker threads, one running
 * a 1-D three-point stencil (loops), the other a recursive call-heavy computation, so a
 * profiler must sample and unwind two threads at once on two vCPUs.
 * Usage: threads [SCALE] (default 14). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

struct job {
	int scale;
	double result;
};

__attribute__((noinline)) static void smooth(const double *in, double *out, int n)
{
	for (int i = 1; i < n - 1; i++)
		out[i] = 0.25 * in[i - 1] + 0.5 * in[i] + 0.25 * in[i + 1];
}

static void *stencil_main(void *arg)
{
	struct job *job = arg;
	int n = 1 << 16, steps = 1600 * job->scale;
	double *x = calloc(n, sizeof *x), *y = calloc(n, sizeof *y);
	if (!x || !y)
		return NULL;
	for (int i = 0; i < n; i++)
		x[i] = (i * 37) % 101;
	for (int s = 0; s < steps; s++) {
		smooth(x, y, n);
		double *t = x;
		x = y;
		y = t;
	}
	job->result = x[n / 2];
	free(x);
	free(y);
	return NULL;
}

__attribute__((noinline)) static unsigned long twist(unsigned long a, unsigned long b)
{
	unsigned long r = (a << 1) + (b ^ 0x9e37u);
	__asm__ volatile("" : "+r"(r));
	return r;
}

__attribute__((noinline)) static unsigned long descend(int n)
{
	if (n < 2)
		return (unsigned long)n + 3;
	return twist(descend(n - 1), descend(n - 2));
}

static void *calls_main(void *arg)
{
	struct job *job = arg;
	unsigned long acc = 0;
	for (int i = 0; i < job->scale; i++)
		acc += descend(36);
	job->result = (double)acc;
	return NULL;
}

int main(int argc, char **argv)
{
	int scale = argc > 1 ? atoi(argv[1]) : 14;
	struct job a = {scale, 0}, b = {scale, 0};
	pthread_t ta, tb;
	if (pthread_create(&ta, NULL, stencil_main, &a) || pthread_create(&tb, NULL, calls_main, &b))
		return 1;
	pthread_join(ta, NULL);
	pthread_join(tb, NULL);
	printf("threads %d: %.3f %.0f\n", scale, a.result, b.result / 1e6);
	return 0;
}
