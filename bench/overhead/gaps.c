/* gaps: measures what each profiler sample costs the sampled thread, kernel included.
 * The thread recurses to DEPTH frames (the stack a profiler must unwind), then spins for
 * SECONDS reading the TSC; every interruption of the spin (timer interrupt, signal
 * delivery, the profiler's handler, sigreturn) shows as a gap between consecutive reads.
 * Gaps longer than CAP_US are the thread being descheduled on the shared VM and are kept
 * apart. Running this with and without a profiler, the per-sample cost is
 *     (gap time/s with the profiler - gap time/s without) / (samples/s delivered).
 * Usage: gaps [DEPTH [SECONDS [CAP_US]]] (default 40 1 1000); prints one line:
 *     gaps depth=D spin_s=S n=N sum_ns=X median_ns=M big_n=B big_ns=Y tsc_hz=F */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <x86intrin.h>

#define MIN_GAP_CYCLES 300 /* a back-to-back rdtsc loop iteration is ~30-50 cycles */
#define HIST 12
#define MAX_KEPT (1 << 20)

struct spin {
	double seconds, hz;
	uint64_t cap, n, sum, big_n, big_sum;
	uint32_t *kept;
	uint64_t hist[HIST]; /* gap counts by power of two of microseconds: <1, <2, <4 ... */
};

static double tsc_hz(void)
{
	struct timespec a, b, pause = {0, 50 * 1000 * 1000};
	clock_gettime(CLOCK_MONOTONIC_RAW, &a);
	uint64_t c0 = __rdtsc();
	nanosleep(&pause, NULL);
	uint64_t c1 = __rdtsc();
	clock_gettime(CLOCK_MONOTONIC_RAW, &b);
	return (double)(c1 - c0) / ((b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9);
}

__attribute__((noinline)) static void spin(struct spin *s)
{
	uint64_t start = __rdtsc(), end = start + (uint64_t)(s->seconds * s->hz), prev = start;
	for (uint64_t t; (t = __rdtsc()) < end; prev = t) {
		uint64_t d = t - prev;
		if (d < MIN_GAP_CYCLES)
			continue;
		int b = 0;
		for (uint64_t us = (uint64_t)(d / s->hz * 1e6); us && b < HIST - 1; us >>= 1)
			b++;
		s->hist[b]++;
		if (d > s->cap) {
			s->big_n++;
			s->big_sum += d;
		} else {
			if (s->n < MAX_KEPT)
				s->kept[s->n] = (uint32_t)d;
			s->n++;
			s->sum += d;
		}
	}
}

/* Recursion that the compiler can neither flatten nor turn into a loop. */
__attribute__((noinline)) static int descend_then_spin(int depth, struct spin *s)
{
	if (depth <= 0) {
		spin(s);
		return 0;
	}
	int r = descend_then_spin(depth - 1, s);
	__asm__ volatile("" : "+r"(r));
	return r + 1;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	int depth = argc > 1 ? atoi(argv[1]) : 40;
	struct spin s = {.seconds = argc > 2 ? atof(argv[2]) : 1.0, .hz = tsc_hz()};
	s.cap = (uint64_t)((argc > 3 ? atof(argv[3]) : 1000.0) * 1e-6 * s.hz);
	s.kept = calloc(MAX_KEPT, sizeof *s.kept);
	if (!s.kept)
		return 1;
	descend_then_spin(depth, &s);
	uint64_t k = s.n < MAX_KEPT ? s.n : MAX_KEPT;
	qsort(s.kept, k, sizeof *s.kept, cmp_u32);
	double ns = 1e9 / s.hz;
	printf("gaps depth=%d spin_s=%.3f n=%llu sum_ns=%.0f median_ns=%.0f big_n=%llu big_ns=%.0f "
	       "tsc_hz=%.0f\n",
	       depth, s.seconds, (unsigned long long)s.n, s.sum * ns, k ? s.kept[k / 2] * ns : 0.0,
	       (unsigned long long)s.big_n, s.big_sum * ns, s.hz);
	if (getenv("GAPS_HIST")) {
		for (int b = 0; b < HIST; b++)
			fprintf(stderr, "<%dus:%llu ", 1 << b, (unsigned long long)s.hist[b]);
		fputc('\n', stderr);
	}
	free(s.kept);
	return 0;
}
