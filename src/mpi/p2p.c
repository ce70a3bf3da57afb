/* Point-to-point: blocking sends and receives, non-blocking ones (bytes when posted) and
 * their completion (MPI_Wait*, MPI_Test*: time). */
#include "mpi/wrap.h"

/* A blocking send: bytes and one message. */
#define SEND_WRAPPER(name)                                                                         \
	CP_MPI_EXPORT int name(const void *buf, int count, MPI_Datatype type, int dest, int tag,   \
			       MPI_Comm comm)                                                      \
	{                                                                                          \
		struct cp_mpi_call c;                                                              \
		cp_mpi_begin(&c);                                                                  \
		int rc = P##name(buf, count, type, dest, tag, comm);                               \
		if (c.on && dest != MPI_PROC_NULL) {                                               \
			cp_mpi_sent(&c, cp_mpi_bytes(count, type));                                \
			cp_mpi_wait_on(&c, CP_MF_SYNC_MPI_SEND, comm, dest, tag);                  \
		}                                                                                  \
		CP_MPI_END(&c, name);                                                              \
		return rc;                                                                         \
	}

SEND_WRAPPER(MPI_Send)
SEND_WRAPPER(MPI_Ssend)
SEND_WRAPPER(MPI_Bsend)
SEND_WRAPPER(MPI_Rsend)

/* A non-blocking send or receive: its bytes when posted; the request remembered with its
 * communicator, peer and tag for the wait that completes it. */
#define POST_WRAPPER(name, qualifier, account, kind)                                               \
	CP_MPI_EXPORT int name(qualifier void *buf, int count, MPI_Datatype type, int peer,        \
			       int tag, MPI_Comm comm, MPI_Request *req)                           \
	{                                                                                          \
		struct cp_mpi_call c;                                                              \
		cp_mpi_begin(&c);                                                                  \
		int rc = P##name(buf, count, type, peer, tag, comm, req);                          \
		if (c.on && peer != MPI_PROC_NULL) {                                               \
			account(&c, cp_mpi_bytes(count, type));                                    \
			if (rc == MPI_SUCCESS)                                                     \
				cp_mpi_req_post(*req, kind, comm, peer, tag);                      \
		}                                                                                  \
		CP_MPI_END(&c, name);                                                              \
		return rc;                                                                         \
	}

POST_WRAPPER(MPI_Isend, const, cp_mpi_sent, CP_MF_SYNC_MPI_SEND)
POST_WRAPPER(MPI_Issend, const, cp_mpi_sent, CP_MF_SYNC_MPI_SEND)
POST_WRAPPER(MPI_Ibsend, const, cp_mpi_sent, CP_MF_SYNC_MPI_SEND)
POST_WRAPPER(MPI_Irsend, const, cp_mpi_sent, CP_MF_SYNC_MPI_SEND)
POST_WRAPPER(MPI_Irecv, , cp_mpi_received, CP_MF_SYNC_MPI_RECV)

CP_MPI_EXPORT int MPI_Recv(void *buf, int count, MPI_Datatype type, int source, int tag,
			   MPI_Comm comm, MPI_Status *status)
{
	struct cp_mpi_call c;
	MPI_Status own;
	cp_mpi_begin(&c);
	MPI_Status *st = c.on && status == MPI_STATUS_IGNORE ? &own : status;
	int rc = PMPI_Recv(buf, count, type, source, tag, comm, st);
	if (c.on && rc == MPI_SUCCESS && source != MPI_PROC_NULL) {
		cp_mpi_received(&c, cp_mpi_status_bytes(st, type));
		cp_mpi_wait_on(&c, CP_MF_SYNC_MPI_RECV, comm, st->MPI_SOURCE, st->MPI_TAG);
	}
	CP_MPI_END(&c, MPI_Recv);
	return rc;
}

CP_MPI_EXPORT int MPI_Sendrecv(const void *sbuf, int scount, MPI_Datatype stype, int dest, int stag,
			       void *rbuf, int rcount, MPI_Datatype rtype, int source, int rtag,
			       MPI_Comm comm, MPI_Status *status)
{
	struct cp_mpi_call c;
	MPI_Status own;
	cp_mpi_begin(&c);
	MPI_Status *st = c.on && status == MPI_STATUS_IGNORE ? &own : status;
	int rc = PMPI_Sendrecv(sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, source, rtag,
			       comm, st);
	if (c.on && dest != MPI_PROC_NULL)
		cp_mpi_sent(&c, cp_mpi_bytes(scount, stype));
	if (c.on && rc == MPI_SUCCESS && source != MPI_PROC_NULL) {
		cp_mpi_received(&c, cp_mpi_status_bytes(st, rtype));
		cp_mpi_wait_on(&c, CP_MF_SYNC_MPI_RECV, comm, st->MPI_SOURCE, st->MPI_TAG);
	} else if (c.on && dest != MPI_PROC_NULL) {
		cp_mpi_wait_on(&c, CP_MF_SYNC_MPI_SEND, comm, dest, stag);
	}
	CP_MPI_END(&c, MPI_Sendrecv);
	return rc;
}

/* A call timed whole (completion, probing, synchronisation); `before` and `after` (which
 * may use c and the parameters) run around it when measuring. */
#define TIMED_WRAPPER_AROUND(name, params, args, before, after)                                    \
	CP_MPI_EXPORT int name params                                                              \
	{                                                                                          \
		struct cp_mpi_call c;                                                              \
		cp_mpi_begin(&c);                                                                  \
		if (c.on) {                                                                        \
			before;                                                                    \
		}                                                                                  \
		int rc = P##name args;                                                             \
		if (c.on) {                                                                        \
			after;                                                                     \
		}                                                                                  \
		CP_MPI_END(&c, name);                                                              \
		return rc;                                                                         \
	}
#define TIMED_WRAPPER(name, params, args) TIMED_WRAPPER_AROUND(name, params, args, , )

/* MPI_Wait: what its request waited on; a receive's source and tag from its status. */
CP_MPI_EXPORT int MPI_Wait(MPI_Request *req, MPI_Status *status)
{
	struct cp_mpi_call c;
	MPI_Status own;
	cp_mpi_begin(&c);
	MPI_Status *st = c.on && status == MPI_STATUS_IGNORE ? &own : status;
	if (c.on)
		cp_mpi_reqs_wait(&c, 1, req, 1);
	int rc = PMPI_Wait(req, st);
	if (c.on && rc == MPI_SUCCESS && c.w.kind == CP_MF_SYNC_MPI_RECV &&
	    c.w.comm != CP_MF_MPI_COMM_UNKNOWN && st->MPI_SOURCE != MPI_PROC_NULL) {
		c.w.peer = st->MPI_SOURCE;
		c.w.tag = st->MPI_TAG;
	}
	CP_MPI_END(&c, MPI_Wait);
	return rc;
}

/* MPI_Probe: the message's source and tag from its status. */
CP_MPI_EXPORT int MPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status *status)
{
	struct cp_mpi_call c;
	MPI_Status own;
	cp_mpi_begin(&c);
	MPI_Status *st = c.on && status == MPI_STATUS_IGNORE ? &own : status;
	int rc = PMPI_Probe(source, tag, comm, st);
	if (c.on && rc == MPI_SUCCESS && source != MPI_PROC_NULL)
		cp_mpi_wait_on(&c, CP_MF_SYNC_MPI_RECV, comm, st->MPI_SOURCE, st->MPI_TAG);
	CP_MPI_END(&c, MPI_Probe);
	return rc;
}

/* A test that completes its request forgets it. */
CP_MPI_EXPORT int MPI_Test(MPI_Request *req, int *flag, MPI_Status *st)
{
	struct cp_mpi_call c;
	cp_mpi_begin(&c);
	MPI_Request posted = *req;
	int rc = PMPI_Test(req, flag, st);
	if (rc == MPI_SUCCESS && *flag)
		cp_mpi_req_drop(posted);
	CP_MPI_END(&c, MPI_Test);
	return rc;
}

/* Waitall takes its requests; Waitany and Waitsome only look (the ones they complete stay
 * in the cache until their slots are reused). */
TIMED_WRAPPER_AROUND(MPI_Waitall, (int n, MPI_Request reqs[], MPI_Status sts[]), (n, reqs, sts),
		     cp_mpi_reqs_wait(&c, n, reqs, 1), )
TIMED_WRAPPER_AROUND(MPI_Waitany, (int n, MPI_Request reqs[], int *index, MPI_Status *st),
		     (n, reqs, index, st), cp_mpi_reqs_wait(&c, n, reqs, 0), )
TIMED_WRAPPER_AROUND(MPI_Waitsome,
		     (int n, MPI_Request reqs[], int *outcount, int indices[], MPI_Status sts[]),
		     (n, reqs, outcount, indices, sts), cp_mpi_reqs_wait(&c, n, reqs, 0), )
TIMED_WRAPPER(MPI_Testall, (int n, MPI_Request reqs[], int *flag, MPI_Status sts[]),
	      (n, reqs, flag, sts))
TIMED_WRAPPER(MPI_Testany, (int n, MPI_Request reqs[], int *index, int *flag, MPI_Status *st),
	      (n, reqs, index, flag, st))
TIMED_WRAPPER(MPI_Testsome,
	      (int n, MPI_Request reqs[], int *outcount, int indices[], MPI_Status sts[]),
	      (n, reqs, outcount, indices, sts))
TIMED_WRAPPER_AROUND(MPI_Barrier, (MPI_Comm comm), (comm), ,
		     cp_mpi_wait_on(&c, CP_MF_SYNC_MPI_COLL, comm, CP_MF_MPI_NONE, CP_MF_MPI_NONE))
