/* OpenMP regions for the omp tests (built with -fopenmp: tests/workloads/CMakeLists.txt).
 *
 *   omp-regions imbalance N   region_work from two callers (caller_a, then caller_b), in
 *                             each thread 0 does 3x the work of the others
 *   omp-regions nested N      an outer region of 2 threads, each starting an inner one
 *   omp-regions tasks N       one thread creates tasks that the team runs
 *   omp-regions dynamic N     a parallel loop with schedule(dynamic)
 *   omp-regions idle N        20 rounds of serial_init (serial, on the master) and a
 *                             balanced region of the same length: the workers idle half
 *                             of the time (omp-idle)
 *
 * N scales the work (units of ~0.1 ms); the team size comes from OMP_NUM_THREADS. */
#include "common.h"
#include <omp.h>
#include <stdio.h>
#include <string.h>

volatile uint64_t workload_sink;

NOINLINE uint64_t crunch(uint64_t units)
{
	return spin(units, units);
}

static void sink(uint64_t r)
{
	__atomic_add_fetch(&workload_sink, r, __ATOMIC_RELAXED);
}

NOINLINE void region_work(long units)
{
#pragma omp parallel
	{
		long n = omp_get_thread_num() == 0 ? 3 * units : units;
		uint64_t r = 0;
		for (long i = 0; i < n; i++)
			r += crunch(100000);
		sink(r);
	}
}

/* (the empty asm after each call keeps it from becoming a tail call, which would leave
 * the caller out of the path) */
NOINLINE void caller_a(long units)
{
	region_work(units);
	__asm__ volatile("");
}

NOINLINE void caller_b(long units)
{
	region_work(units);
	__asm__ volatile("");
}

NOINLINE void inner_work(long units)
{
#pragma omp parallel num_threads(2)
	{
		uint64_t r = 0;
		for (long i = 0; i < units; i++)
			r += crunch(100000);
		sink(r);
	}
}

NOINLINE void nested(long units)
{
	omp_set_max_active_levels(2);
#pragma omp parallel num_threads(2)
	{
		inner_work(units);
		__asm__ volatile("");
	}
}

NOINLINE void task_body(long units)
{
	sink(crunch((uint64_t)units * 100000));
}

NOINLINE void tasks(long units)
{
#pragma omp parallel
#pragma omp single
	for (int k = 0; k < 16; k++) {
#pragma omp task firstprivate(k)
		task_body(units / 4 + k % 2);
	}
}

NOINLINE void dynamic(long units)
{
	uint64_t r = 0;
#pragma omp parallel for schedule(dynamic, 1) reduction(+ : r)
	for (long i = 0; i < 4 * units; i++)
		r += crunch(100000);
	sink(r);
}

NOINLINE void serial_init(long units)
{
	uint64_t r = 0;
	for (long i = 0; i < units; i++)
		r += crunch(100000);
	sink(r);
}

NOINLINE void balanced(long units)
{
#pragma omp parallel
	{
		uint64_t r = 0;
		for (long i = 0; i < units; i++)
			r += crunch(100000);
		sink(r);
	}
}

NOINLINE void idle_phases(long units)
{
	for (int k = 0; k < 20; k++) {
		serial_init(units / 20);
		balanced(units / 20);
	}
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "imbalance";
	long units = arg_or(argc, argv, 2, 1000);
	if (!strcmp(mode, "imbalance")) {
		caller_a(units);
		caller_b(units);
	} else if (!strcmp(mode, "nested")) {
		nested(units);
	} else if (!strcmp(mode, "tasks")) {
		tasks(units);
	} else if (!strcmp(mode, "dynamic")) {
		dynamic(units);
	} else if (!strcmp(mode, "idle")) {
		idle_phases(units);
	} else {
		fprintf(stderr, "omp-regions: unknown mode %s\n", mode);
		return 2;
	}
	printf("omp-regions %s done %llu\n", mode, (unsigned long long)(workload_sink & 1));
	return 0;
}
