/* Planted: an MPI late sender. Every round rank 0 computes in prepare_block() (about
 * 5 ms) before sending the block to rank 1; rank 1 posts its receive in await_block()
 * right away and waits there (the MPI_Recv between the markers) about 80 % of its time.
 * Both ranks then compute briefly in combine(). Run with 2 ranks. */
#include "planted.h"
#include <mpi.h>

#define BLOCK 1024

static double block[BLOCK];
static volatile double sink;

NOINLINE static void prepare_block(int round)
{
	uint64_t x = spin(5000000, (uint64_t)round);
	for (int i = 0; i < BLOCK; i++)
		block[i] = (double)((x >> (i & 31)) & 255);
}

NOINLINE static void await_block(void)
{
	/* planted: begin */
	MPI_Recv(block, BLOCK, MPI_DOUBLE, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	/* planted: end */
}

NOINLINE static double combine(void)
{
	return (double)spin(500000, (uint64_t)block[3]);
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank, size;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	double secs = planted_seconds(argc, argv), start = planted_now();
	long rounds = 0;
	for (int go = 1; go;) {
		if (rank == 0) {
			prepare_block((int)rounds);
			if (size > 1)
				MPI_Send(block, BLOCK, MPI_DOUBLE, 1, 7, MPI_COMM_WORLD);
		} else if (rank == 1) {
			await_block();
		}
		sink += combine();
		rounds++;
		go = planted_now() - start < secs;
		MPI_Bcast(&go, 1, MPI_INT, 0, MPI_COMM_WORLD); /* rank 0 decides when to stop */
	}
	if (rank == 0)
		planted_done("mpi-late-sender", rounds, start);
	MPI_Finalize();
	return 0;
}
