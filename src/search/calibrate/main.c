/* callpath-calibrate: the workload `callpath search` measures its probes' costs on at its
 * start (src/search/calib.c, docs/cmd-search.md "Cost limit"). Run under the runtime with
 * the control channel and loop probes allowed:
 *
 *   callpath-calibrate CALLS ITERATIONS
 *
 * It measures, in thread CPU time, CALLS calls of cp_calib_tiny() and one call of
 * cp_calib_spin() running ITERATIONS iterations, a few times, and prints the medians per
 * call and per iteration: "plain PID CALL_NS ITER_NS". It then waits for a line on stdin
 * (the caller has inserted cp_calib_tiny's entry probe and cp_calib_spin's loop probes
 * meanwhile), measures the same again and prints "probed CALL_NS ITER_NS". The probes'
 * cost is the difference. Built -O2 whatever the build type; not sanitized. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define REPS_MAX 7
#define REPS_MIN 3
#define PHASE_NS 150e6 /* CPU time per phase after which REPS_MIN repetitions suffice */

/* Long enough to be probed (more than 5 bytes); its work is kept by the asm. */
__attribute__((noinline)) unsigned long cp_calib_tiny(unsigned long x)
{
	__asm__ volatile("" : "+r"(x));
	x = x * 3 + 1;
	__asm__ volatile("" : "+r"(x));
	return x ^ (x >> 7);
}

/* A loop of about a nanosecond per iteration: one back edge per iteration counted. */
__attribute__((noinline)) unsigned long cp_calib_spin(unsigned long n)
{
	unsigned long x = 0;
#pragma GCC unroll 1
	for (unsigned long i = 0; i < n; i++) {
		x += i ^ (x >> 3);
		__asm__ volatile("" : "+r"(x));
	}
	return x;
}

static double cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static volatile unsigned long sink;

static double per_call(unsigned long calls)
{
	unsigned long acc = 0;
	double t = cpu_ns();
	for (unsigned long i = 0; i < calls; i++)
		acc += cp_calib_tiny(acc ^ i);
	t = cpu_ns() - t;
	sink = acc;
	return t / (double)calls;
}

static double per_iteration(unsigned long iterations)
{
	double t = cpu_ns();
	sink = cp_calib_spin(iterations);
	return (cpu_ns() - t) / (double)iterations;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, cmp);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* One phase: the medians per call and per iteration, warmed up first (the first probed
 * call finds its calling context by a stack walk). */
static void phase(unsigned long calls, unsigned long iterations, double *call_ns, double *iter_ns)
{
	double c[REPS_MAX], it[REPS_MAX], start = cpu_ns();
	int n = 0;
	per_call(1000);
	per_iteration(1000);
	while (n < REPS_MAX && (n < REPS_MIN || cpu_ns() - start < PHASE_NS)) {
		c[n] = per_call(calls);
		it[n] = per_iteration(iterations);
		n++;
	}
	*call_ns = median(c, n);
	*iter_ns = median(it, n);
}

int main(int argc, char **argv)
{
	char line[64];
	double call_ns, iter_ns;
	unsigned long calls = argc > 1 ? strtoul(argv[1], NULL, 10) : 100000;
	unsigned long iterations = argc > 2 ? strtoul(argv[2], NULL, 10) : 200000;
	if (!calls || !iterations) {
		fprintf(stderr, "usage: callpath-calibrate CALLS ITERATIONS\n");
		return 2;
	}
	phase(calls, iterations, &call_ns, &iter_ns);
	printf("plain %d %.3f %.3f\n", (int)getpid(), call_ns, iter_ns);
	fflush(stdout);
	if (!fgets(line, sizeof line, stdin))
		return 1; /* the caller gave up */
	phase(calls, iterations, &call_ns, &iter_ns);
	printf("probed %.3f %.3f\n", call_ns, iter_ns);
	fflush(stdout);
	return 0;
}
