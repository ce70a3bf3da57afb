/* The runtime's interface for libcallpath-mpi.so (src/mpi/), the PMPI wrappers preloaded
 * beside it: the MPI library never unwinds or writes files itself, it tells the runtime
 * what a call cost and where it was made. Exported from every libcallpath-rt*.so (the
 * MPI library references them weakly: without the runtime they are NULL and it only
 * forwards calls). Plain C types only: this header is included by code built against
 * mpi.h and by the runtime, which never includes mpi.h. */
#ifndef CP_RUNTIME_CORE_MPI_H
#define CP_RUNTIME_CORE_MPI_H

#include <stdint.h>

/* The values of one MPI call, in the order of the runtime's mpi-* metrics. */
enum callpath_mpi_value {
	CALLPATH_MPI_TIME,	 /* ns spent in the call (mpi-time) */
	CALLPATH_MPI_CALLS,	 /* 1 (mpi-calls) */
	CALLPATH_MPI_SENT_BYTES, /* bytes this rank sent (mpi-sent-bytes) */
	CALLPATH_MPI_RECV_BYTES, /* bytes this rank received, or posted to receive */
	CALLPATH_MPI_SENT_MSGS,	 /* messages sent (mpi-sent-msgs) */
	CALLPATH_MPI_RECV_MSGS,	 /* messages received (mpi-recv-msgs) */
	CALLPATH_MPI_NVALUES,
};

/* Records the values of a call the program made to `fn` (the wrapper's entry: the node
 * the values land on, below the calling context) from the call site `ra`, with the
 * wrapper's CFA and the caller's rbp (the synchronous-trigger context cache, core/sync.h).
 * Zero values are left out. Does nothing unless the runtime measures MPI (CALLPATH_MPI=1,
 * which `callpath record` sets when it preloads libcallpath-mpi.so). Keeps errno. */
void callpath_mpi_record(const void *ra, const void *cfa, const void *caller_fp, const void *fn,
			 const uint64_t values[CALLPATH_MPI_NVALUES]);

/* An MPI call that blocked, as a synchronization object (format/measure.h, minor 4). */
struct callpath_mpi_wait {
	uint32_t kind; /* enum cp_mf_sync_kind: CP_MF_SYNC_MPI_RECV, _SEND, _COLL */
	uint32_t comm; /* the communicator's number (CP_MF_MPI_COMM_*) */
	int32_t peer;  /* rank in comm, or CP_MF_MPI_NONE */
	int32_t tag;   /* or CP_MF_MPI_NONE */
};

/* callpath_mpi_record, and the call's time as a wait on w in the thread's sync-object
 * table (at the call site's node), when values[CALLPATH_MPI_TIME] is not 0. */
void callpath_mpi_record_wait(const void *ra, const void *cfa, const void *caller_fp,
			      const void *fn, const uint64_t values[CALLPATH_MPI_NVALUES],
			      const struct callpath_mpi_wait *w);

/* The name the program gave communicator `comm` (MPI_Comm_set_name): an MPI_COMM record in
 * the process file. */
void callpath_mpi_comm_name(uint32_t comm, const char *name);

/* MPI_Init's word on the rank in MPI_COMM_WORLD and the number of ranks: into the process
 * file's and every thread file's header (and for threads started later). */
void callpath_mpi_rank(int rank, int size);

/* 1 while the runtime records MPI values (so wrappers skip the clock reads otherwise). */
int callpath_mpi_on(void);

#endif
