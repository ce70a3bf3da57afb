/* Shared by the MPI workloads: CPU work for a wall-clock time (a rank made late by N ms
 * is late by N ms whatever the machine's load). */
#ifndef CP_WORKLOAD_MPI_COMMON_H
#define CP_WORKLOAD_MPI_COMMON_H

#include <time.h>

static inline double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Computes for ms milliseconds; the result keeps the loop. */
static inline double busy_ms(double ms)
{
	double t0 = now_ms(), x = 0;
	while (now_ms() - t0 < ms)
		for (int i = 0; i < 10000; i++)
			x += i * 1e-9;
	return x;
}

#endif
