/* MPI x OpenMP: each rank runs a parallel region of OMP_NUM_THREADS threads (the tests use
 * 2) in which thread t computes (t + 1) units, then the master alone calls MPI_Allreduce
 * (MPI_THREAD_FUNNELED). Usage: hybrid [units_ms] */
#include <mpi.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include "mpi-common.h"

__attribute__((noinline)) static double work(double ms)
{
	return busy_ms(ms);
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
