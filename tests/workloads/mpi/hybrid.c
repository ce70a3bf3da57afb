/* MPI x OpenMP: each rank runs a parallel region of OMP_NUM_THREADS threads (the tests use
 * 2) in which thread t computes (t + 1) units, then the master alone calls MPI_Allreduce
 * (MPI_THREAD_FUNNELED). Usage: hybrid [units_ms] */
#include <mpi.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

__attribute__((noinline)) static double work(double ms)
{
	double t0 = now_ms(), x = 0;
	while (now_ms() - t0 < ms)
		for (int i = 0; i < 10000; i++)
			x += i * 1e-9;
	return x;
}

__attribute__((noinline)) static double region(double ms)
{
	double sum = 0;
#pragma omp parallel reduction(+ : sum)
	sum += work(ms * (omp_get_thread_num() + 1));
	return sum;
}

int main(int argc, char **argv)
{
	int provided, rank, size;
	double ms = argc > 1 ? atof(argv[1]) : 50, in, out;
	MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	in = region(ms);
	MPI_Allreduce(&in, &out, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
	if (rank == 0)
		printf("hybrid done: %d ranks x %d threads\n", size, omp_get_max_threads());
	MPI_Finalize();
	return 0;
}
