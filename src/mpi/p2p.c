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
		if (c.on && dest != MPI_PROC_NULL)                                                 \
			cp_mpi_sent(&c, cp_mpi_bytes(count, type));                                \
		CP_MPI_END(&c, name);                                                              \
		return rc;                                                                         \
	}

SEND_WRAPPER(MPI_Send)
SEND_WRAPPER(MPI_Ssend)
SEND_WRAPPER(MPI_Bsend)
SEND_WRAPPER(MPI_Rsend)

/* A non-blocking send or receive: its bytes when posted. */
#define POST_WRAPPER(name, qualifier, account)                                                     \
	CP_MPI_EXPORT int name(qualifier void *buf, int count, MPI_Datatype type, int peer,        \
			       int tag, MPI_Comm comm, MPI_Request *req)                           \
	{                                                                                          \
		struct cp_mpi_call c;                                                              \
		cp_mpi_begin(&c);                                                                  \
		int rc = P##name(buf, count, type, peer, tag, comm, req);                          \
		if (c.on && peer != MPI_PROC_NULL)                                                 \
			account(&c, cp_mpi_bytes(count, type));                                    \
		CP_MPI_END(&c, name);                                                              \
		return rc;                                                                         \
	}

POST_WRAPPER(MPI_Isend, const, cp_mpi_sent)
POST_WRAPPER(MPI_Issend, const, cp_mpi_sent)
POST_WRAPPER(MPI_Ibsend, const, cp_mpi_sent)
POST_WRAPPER(MPI_Irsend, const, cp_mpi_sent)
POST_WRAPPER(MPI_Irecv, , cp_mpi_received)

CP_MPI_EXPORT int MPI_Recv(void *buf, int count, MPI_Datatype type, int source, int tag,
			   MPI_Comm comm, MPI_Status *status)
{
	struct cp_mpi_call c;
	MPI_Status own;
	cp_mpi_begin(&c);
	MPI_Status *st = c.on && status == MPI_STATUS_IGNORE ? &own : status;
	int rc = PMPI_Recv(buf, count, type, source, tag, comm, st);
	if (c.on && rc == MPI_SUCCESS && source != MPI_PROC_NULL)
		cp_mpi_received(&c, cp_mpi_status_bytes(st, type));
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
	if (c.on && rc == MPI_SUCCESS && source != MPI_PROC_NULL)
		cp_mpi_received(&c, cp_mpi_status_bytes(st, rtype));
	CP_MPI_END(&c, MPI_Sendrecv);
	return rc;
}

/* A call timed whole (completion, probing, synchronisation). */
#define TIMED_WRAPPER(name, params, args)                                                          \
	CP_MPI_EXPORT int name params                                                              \
	{                                                                                          \
		struct cp_mpi_call c;                                                              \
		cp_mpi_begin(&c);                                                                  \
		int rc = P##name args;                                                             \
		CP_MPI_END(&c, name);                                                              \
		return rc;                                                                         \
	}

TIMED_WRAPPER(MPI_Wait, (MPI_Request * req, MPI_Status *st), (req, st))
TIMED_WRAPPER(MPI_Waitall, (int n, MPI_Request reqs[], MPI_Status sts[]), (n, reqs, sts))
TIMED_WRAPPER(MPI_Waitany, (int n, MPI_Request reqs[], int *index, MPI_Status *st),
	      (n, reqs, index, st))
TIMED_WRAPPER(MPI_Waitsome,
	      (int n, MPI_Request reqs[], int *outcount, int indices[], MPI_Status sts[]),
	      (n, reqs, outcount, indices, sts))
TIMED_WRAPPER(MPI_Test, (MPI_Request * req, int *flag, MPI_Status *st), (req, flag, st))
TIMED_WRAPPER(MPI_Testall, (int n, MPI_Request reqs[], int *flag, MPI_Status sts[]),
	      (n, reqs, flag, sts))
TIMED_WRAPPER(MPI_Testany, (int n, MPI_Request reqs[], int *index, int *flag, MPI_Status *st),
	      (n, reqs, index, flag, st))
TIMED_WRAPPER(MPI_Testsome,
	      (int n, MPI_Request reqs[], int *outcount, int indices[], MPI_Status sts[]),
	      (n, reqs, outcount, indices, sts))
TIMED_WRAPPER(MPI_Probe, (int source, int tag, MPI_Comm comm, MPI_Status *st),
	      (source, tag, comm, st))
TIMED_WRAPPER(MPI_Barrier, (MPI_Comm comm), (comm))
