/* libcallpath-mpi.so: PMPI wrappers preloaded beside the runtime (libcallpath-rt*.so).
 * The only code of callpath that includes mpi.h. Each wrapper calls the PMPI_ function
 * and, while the runtime measures MPI (callpath_mpi_on), tells it the call's time, bytes
 * and messages with the program's call site (runtime/core/mpi.h): the runtime unwinds and
 * attributes, this library only counts.
 *
 * Bytes are those of the program's buffers as the call describes them (count x type
 * size), per rank: what this rank gives to the call (sent) and what it gets back
 * (received), not the traffic of the MPI library's algorithms. A receive counts what
 * arrived (MPI_Get_count of its status); a non-blocking receive counts what it posted,
 * at MPI_Irecv; MPI_Wait and MPI_Test calls count their time. */
#ifndef CP_MPI_WRAP_H
#define CP_MPI_WRAP_H

#include "format/measure.h"
#include "runtime/core/mpi.h"

#include <mpi.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

/* The runtime's entry points, weak: absent when the library is loaded without it. */
#define CP_MPI_WEAK __attribute__((weak))
void callpath_mpi_record(const void *ra, const void *cfa, const void *caller_fp, const void *fn,
			 const uint64_t values[CALLPATH_MPI_NVALUES]) CP_MPI_WEAK;
void callpath_mpi_record_wait(const void *ra, const void *cfa, const void *caller_fp,
			      const void *fn, const uint64_t values[CALLPATH_MPI_NVALUES],
			      const struct callpath_mpi_wait *w) CP_MPI_WEAK;
void callpath_mpi_comm_name(uint32_t comm, const char *name) CP_MPI_WEAK;
void callpath_mpi_rank(int rank, int size) CP_MPI_WEAK;
int callpath_mpi_on(void) CP_MPI_WEAK;

#define CP_MPI_EXPORT __attribute__((visibility("default")))
#define CP_MPI_HIDDEN __attribute__((visibility("hidden")))

/* One call being measured; a call that may block names what it waited on in w
 * (cp_mpi_wait_on: has_wait). */
struct cp_mpi_call {
	int on;
	int has_wait;
	uint64_t t0;
	uint64_t v[CALLPATH_MPI_NVALUES];
	struct callpath_mpi_wait w;
};

static inline uint64_t cp_mpi_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline void cp_mpi_begin(struct cp_mpi_call *c)
{
	c->on = callpath_mpi_on && callpath_mpi_on();
	if (!c->on)
		return;
	memset(c->v, 0, sizeof c->v);
	c->has_wait = 0;
	c->t0 = cp_mpi_now();
}

/* Ends call c of the wrapper fn: expanded in the wrapper itself, so that the return
 * address, CFA and frame are the wrapper's (the call site in the program). */
#define CP_MPI_END(c, fn)                                                                          \
	do {                                                                                       \
		if (!(c)->on)                                                                      \
			break;                                                                     \
		(c)->v[CALLPATH_MPI_TIME] = cp_mpi_now() - (c)->t0;                                \
		(c)->v[CALLPATH_MPI_CALLS] = 1;                                                    \
		if ((c)->has_wait && callpath_mpi_record_wait)                                     \
			callpath_mpi_record_wait(__builtin_return_address(0),                      \
						 __builtin_dwarf_cfa(),                            \
						 *(void *const *)__builtin_frame_address(0),       \
						 (const void *)(fn), (c)->v, &(c)->w);             \
		else                                                                               \
			callpath_mpi_record(__builtin_return_address(0), __builtin_dwarf_cfa(),    \
					    *(void *const *)__builtin_frame_address(0),            \
					    (const void *)(fn), (c)->v);                           \
	} while (0)

/* count elements of type t, in bytes (0 for a type MPI cannot size). */
uint64_t cp_mpi_bytes(int count, MPI_Datatype t) CP_MPI_HIDDEN;
/* What a completed receive got, in bytes (st must not be MPI_STATUS_IGNORE). */
uint64_t cp_mpi_status_bytes(const MPI_Status *st, MPI_Datatype t) CP_MPI_HIDDEN;
/* The number of processes of comm (0 if unknown), and this process's rank in it. */
int cp_mpi_comm_size(MPI_Comm comm) CP_MPI_HIDDEN;
int cp_mpi_comm_rank(MPI_Comm comm) CP_MPI_HIDDEN;
/* After MPI_Init: the rank and size of MPI_COMM_WORLD to the runtime. */
void cp_mpi_confirm_rank(void) CP_MPI_HIDDEN;

/* Synchronization objects (objects.c): the number of communicator comm in this process
 * (CP_MF_MPI_COMM_*: WORLD, SELF, then by creation or first use); a non-blocking call's
 * request remembered with what it waits on, and taken back (1 if known) when it is waited
 * for; cp_mpi_req_drop forgets one completed by a test. */
uint32_t cp_mpi_comm_id(MPI_Comm comm) CP_MPI_HIDDEN;
void cp_mpi_req_post(MPI_Request req, uint32_t kind, MPI_Comm comm, int peer,
		     int tag) CP_MPI_HIDDEN;
int cp_mpi_req_take(MPI_Request req, struct callpath_mpi_wait *w) CP_MPI_HIDDEN;
void cp_mpi_req_drop(MPI_Request req) CP_MPI_HIDDEN;
/* What n requests wait on together (the first's communicator, peer and tag where they
 * agree, a receive if one is); taken (forgotten) when take, else only looked at. */
void cp_mpi_reqs_wait(struct cp_mpi_call *c, int n, const MPI_Request *reqs,
		      int take) CP_MPI_HIDDEN;

/* Call c blocks on comm as kind (enum cp_mf_sync_kind) with peer and tag (MPI_ANY_SOURCE
 * and MPI_ANY_TAG as posted; CP_MF_MPI_NONE for none). */
static inline void cp_mpi_wait_on(struct cp_mpi_call *c, uint32_t kind, MPI_Comm comm, int peer,
				  int tag)
{
	c->has_wait = 1;
	c->w = (struct callpath_mpi_wait){kind, cp_mpi_comm_id(comm), peer, tag};
}

/* Adds a send / receive of `bytes` to call c (one message each). */
static inline void cp_mpi_sent(struct cp_mpi_call *c, uint64_t bytes)
{
	c->v[CALLPATH_MPI_SENT_BYTES] += bytes;
	c->v[CALLPATH_MPI_SENT_MSGS]++;
}

static inline void cp_mpi_received(struct cp_mpi_call *c, uint64_t bytes)
{
	c->v[CALLPATH_MPI_RECV_BYTES] += bytes;
	c->v[CALLPATH_MPI_RECV_MSGS]++;
}

#endif
