/* Unwind cost: ns per full unwind from the leaf of a recursion of DEPTH frames.
 *
 *   bench-unwind METHOD DEPTH ITERS
 *     cp      callpath's unwinder (cp_unwind_here), warm recipe cache
 *     cpcold  callpath's unwinder with the recipe cache flushed before every unwind
 *     unw     libunwind's unw_backtrace (its fast trace cache path)
 *     fp      a frame-pointer walk with stack-bounds checks (build with frame pointers)
 *
 * Prints: method depth frames ns_per_unwind ns_per_frame. The run script builds this
 * file twice (-O2 without frame pointers for cp/unw, with frame pointers for fp). */
#define UNW_LOCAL_ONLY
#include <libunwind.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "runtime/unwind/cfi.h"
#include "runtime/unwind/modules.h"
#include "runtime/unwind/unwind.h"

#define MAXF 256

static const char *method;
static long iters;
static int frames_seen;
static double ns_total;
static uintptr_t stack_lo, stack_hi;
static volatile uintptr_t sink;

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* Frame-pointer walk: rbp chain, each frame bounds-checked and strictly increasing. */
__attribute__((noinline)) static int fp_walk(uintptr_t *out, int max)
{
	uintptr_t fp = (uintptr_t)__builtin_frame_address(0);
	int n = 0;

	while (n < max && fp >= stack_lo && fp + 16 <= stack_hi && !(fp & 7)) {
		uintptr_t next = ((uintptr_t *)fp)[0];
		out[n++] = ((uintptr_t *)fp)[1];
		if (next <= fp)
			break;
		fp = next;
	}
	return n;
}

__attribute__((noinline)) static void measure(void)
{
	struct cp_frame f[MAXF];
	void *ips[MAXF];
	uintptr_t pcs[MAXF];
	enum cp_unwind_status st;
	int n = 0;
	double t0 = now_ns();

	if (!strcmp(method, "cp")) {
		for (long i = 0; i < iters; i++)
			n = cp_unwind_here(f, MAXF, &st);
	} else if (!strcmp(method, "cpcold")) { /* time only the unwinds, not the flushes */
		double sum = 0;
		for (long i = 0; i < iters; i++) {
			double t1;
			cp_unwind_cache_flush();
			t1 = now_ns();
			n = cp_unwind_here(f, MAXF, &st);
			sum += now_ns() - t1;
		}
		t0 = now_ns() - sum;
	} else if (!strcmp(method, "unw")) {
		for (long i = 0; i < iters; i++)
			n = unw_backtrace(ips, MAXF);
	} else {
		for (long i = 0; i < iters; i++)
			n = fp_walk(pcs, MAXF);
	}
	ns_total = now_ns() - t0;
	frames_seen = n;
	if (!strcmp(method, "cp") && st != CP_UNWIND_COMPLETE)
		fprintf(stderr, "warning: unwind status %d\n", st);
}

__attribute__((noinline)) static int recurse(int d)
{
	int r;

	if (d == 0) {
		measure();
		return 1;
	}
	r = recurse(d - 1);
	__asm__ volatile("" ::: "memory"); /* no tail call */
	return r + 1;
}

int main(int argc, char **argv)
{
	pthread_attr_t attr;
	void *addr;
	size_t size;
	int depth;

	if (argc < 4) {
		fprintf(stderr, "usage: %s cp|cpcold|unw|fp DEPTH ITERS\n", argv[0]);
		return 2;
	}
	method = argv[1];
	depth = atoi(argv[2]);
	iters = atol(argv[3]);
	pthread_getattr_np(pthread_self(), &attr);
	pthread_attr_getstack(&attr, &addr, &size);
	stack_lo = (uintptr_t)addr;
	stack_hi = stack_lo + size;
	if (cp_unwind_init() < 0 || cp_modules_init(NULL) < 0)
		return 1;
	cp_unwind_thread_init();
	sink = recurse(depth);
	printf("%s %d %d %.1f %.2f\n", method, depth, frames_seen, ns_total / iters,
	       ns_total / iters / frames_seen);
	return 0;
}
