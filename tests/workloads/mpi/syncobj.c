/* MPI workload for waits by synchronization object (MPI communicators, tags and peers).
 * Run with 2 ranks. Every round:
 *   world_recv: rank 0 waits in MPI_Recv on MPI_COMM_WORLD, tag 7, for rank 1, which
 *     computes `ms` first (a late sender);
 *   rows_wait: rank 1 waits in MPI_Wait for an MPI_Irecv on a duplicate of
 *     MPI_COMM_WORLD named "rows" (MPI_Comm_set_name), tag 3, for rank 0, which computes
 *     `ms` / 2 first;
 *   split_barrier: rank 0 waits in MPI_Barrier on an unnamed MPI_Comm_split (the
 *     process's second communicator: comm#2) for rank 1, which computes `ms` / 4 first.
 * Each rank times its own waits with MPI_Wtime and prints, per object,
 *   "waited RANK PID KIND NAME SECONDS COUNT" (NAME as callpath names it).
 * Usage: syncobj [rounds] [ms] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "mpi-common.h"

static volatile double sink;

struct waited {
	double s;
	int n;
};

__attribute__((noinline)) static void world_recv(int rank, double ms, struct waited *w)
{
	double buf[64] = {0};
	if (rank == 1) {
		sink = busy_ms(ms);
		MPI_Send(buf, 64, MPI_DOUBLE, 0, 7, MPI_COMM_WORLD);
		return;
	}
	double t0 = MPI_Wtime();
	MPI_Recv(buf, 64, MPI_DOUBLE, 1, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	w->s += MPI_Wtime() - t0;
	w->n++;
}

__attribute__((noinline)) static void rows_wait(int rank, MPI_Comm rows, double ms,
						struct waited *w)
{
	int buf[16] = {0};
	if (rank == 0) {
		sink = busy_ms(ms / 2);
		MPI_Send(buf, 16, MPI_INT, 1, 3, rows);
		return;
	}
	MPI_Request req;
	MPI_Irecv(buf, 16, MPI_INT, 0, 3, rows, &req);
	double t0 = MPI_Wtime();
	MPI_Wait(&req, MPI_STATUS_IGNORE);
	w->s += MPI_Wtime() - t0;
	w->n++;
}

__attribute__((noinline)) static void split_barrier(int rank, MPI_Comm split, double ms,
						    struct waited *w)
{
	if (rank == 1) {
		sink = busy_ms(ms / 4);
		MPI_Barrier(split);
		return;
	}
	double t0 = MPI_Wtime();
	MPI_Barrier(split);
	w->s += MPI_Wtime() - t0;
	w->n++;
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank, size;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	int rounds = argc > 1 ? atoi(argv[1]) : 5;
	double ms = argc > 2 ? atof(argv[2]) : 40;
	if (size != 2) {
		if (rank == 0)
			fprintf(stderr, "syncobj: run with 2 ranks\n");
		MPI_Finalize();
		return 2;
	}
	MPI_Comm rows, split;
	MPI_Comm_dup(MPI_COMM_WORLD, &rows);
	MPI_Comm_set_name(rows, "rows");
	MPI_Comm_split(MPI_COMM_WORLD, 0, rank, &split);
	struct waited recv = {0}, wait = {0}, barrier = {0};
	for (int i = 0; i < rounds; i++) {
		world_recv(rank, ms, &recv);
		rows_wait(rank, rows, ms, &wait);
		split_barrier(rank, split, ms, &barrier);
	}
	int pid = (int)getpid();
	if (rank == 0) {
		printf("waited 0 %d mpi-recv MPI_COMM_WORLD tag 7 from rank 1|%.6f %d\n", pid,
		       recv.s, recv.n);
		printf("waited 0 %d mpi-coll comm#2|%.6f %d\n", pid, barrier.s, barrier.n);
	} else {
		printf("waited 1 %d mpi-recv rows tag 3 from rank 0|%.6f %d\n", pid, wait.s,
		       wait.n);
	}
	fflush(stdout);
	MPI_Comm_free(&split);
	MPI_Comm_free(&rows);
	MPI_Finalize();
	return 0;
}
