/* MPI workload: a planted late sender, an imbalanced Allreduce, Isend/Irecv + Waitall, with
 * exactly known byte counts.
 *   late_send/late_recv: rank 1 computes ~compute_ms more before each MPI_Send to rank 0,
 *     which waits in MPI_Recv (LATE_BYTES per message, `rounds` messages).
 *   imbalanced: rank r computes (2r + 1) units, then MPI_Allreduce of ALLRED_COUNT doubles
 *     (rank 0 waits about two units: one unit was too little against a loaded machine's
 *     scheduling delays, and w0 > w1 failed once).
 *   exchange: every rank Isends XCH_COUNT ints to the next and Irecvs from the previous,
 *     then MPI_Waitall.
 * Usage: late-sender [rounds] [compute_ms]; with LATE_SENDER_PIDS=DIR each rank writes its
 * pid to DIR/rankR. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include "mpi-common.h"
#include <unistd.h>

#define LATE_COUNT 1000 /* doubles per late message: 8000 bytes */
#define ALLRED_COUNT 256
#define XCH_COUNT 300 /* ints per exchange message: 1200 bytes */

static volatile double sink;

__attribute__((noinline)) static void compute(double ms)
{
	sink = busy_ms(ms);
}

__attribute__((noinline)) static void late_send(int rounds, double ms)
{
	static double buf[LATE_COUNT];
	for (int i = 0; i < rounds; i++) {
		compute(ms);
		MPI_Send(buf, LATE_COUNT, MPI_DOUBLE, 0, 7, MPI_COMM_WORLD);
	}
}

__attribute__((noinline)) static void late_recv(int rounds)
{
	static double buf[LATE_COUNT];
	for (int i = 0; i < rounds; i++)
		MPI_Recv(buf, LATE_COUNT, MPI_DOUBLE, 1, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

__attribute__((noinline)) static void imbalanced(int rank, double ms)
{
	double in[ALLRED_COUNT] = {rank}, out[ALLRED_COUNT];
	compute(ms * (2 * rank + 1));
	MPI_Allreduce(in, out, ALLRED_COUNT, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
}

__attribute__((noinline)) static void exchange(int rank, int size)
{
	int out[XCH_COUNT], in[XCH_COUNT];
	MPI_Request req[2];
	for (int i = 0; i < XCH_COUNT; i++)
		out[i] = rank;
	MPI_Irecv(in, XCH_COUNT, MPI_INT, (rank + size - 1) % size, 3, MPI_COMM_WORLD, &req[0]);
	MPI_Isend(out, XCH_COUNT, MPI_INT, (rank + 1) % size, 3, MPI_COMM_WORLD, &req[1]);
	MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
}

int main(int argc, char **argv)
{
	int rank, size;
	int rounds = argc > 1 ? atoi(argv[1]) : 5;
	double ms = argc > 2 ? atof(argv[2]) : 40;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	const char *piddir = getenv("LATE_SENDER_PIDS"); /* tests that kill a rank */
	if (piddir) {
		char path[4096];
		snprintf(path, sizeof path, "%s/rank%d.tmp", piddir, rank);
		FILE *f = fopen(path, "w");
		if (f) {
			fprintf(f, "%d\n", (int)getpid());
			fclose(f);
			char done[4096];
			snprintf(done, sizeof done, "%s/rank%d", piddir, rank);
			rename(path, done);
		}
	}
	if (rank == 1)
		late_send(rounds, ms);
	else if (rank == 0)
		late_recv(rounds);
	imbalanced(rank, ms);
	exchange(rank, size);
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0)
		printf("late-sender done: %d ranks\n", size);
	MPI_Finalize();
	return 0;
}
