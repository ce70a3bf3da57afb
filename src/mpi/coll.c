/* Collectives: per rank, the bytes of the buffers it gives (sent) and gets (received),
 * one message each way that carries data. */
#include "mpi/wrap.h"

static int is_root(int root, MPI_Comm comm)
{
	return cp_mpi_comm_rank(comm) == root;
}

CP_MPI_EXPORT int MPI_Bcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm)
{
	struct cp_mpi_call c;
	cp_mpi_begin(&c);
	int rc = PMPI_Bcast(buf, count, type, root, comm);
	if (c.on)
		cp_mpi_wait_on(&c, CP_MF_SYNC_MPI_COLL, comm, root, CP_MF_MPI_NONE);
	if (c.on && is_root(root, comm))
		cp_mpi_sent(&c, cp_mpi_bytes(count, type));
	else if (c.on)
		cp_mpi_received(&c, cp_mpi_bytes(count, type));
	CP_MPI_END(&c, MPI_Bcast);
	return rc;
}

CP_MPI_EXPORT int MPI_Reduce(const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op,
			     int root, MPI_Comm comm)
{
	struct cp_mpi_call c;
	cp_mpi_begin(&c);
	int rc = PMPI_Reduce(sbuf, rbuf, count, type, op, root, comm);
	if (c.on) {
		cp_mpi_wait_on(&c, CP_MF_SYNC_MPI_COLL, comm, root, CP_MF_MPI_NONE);
		cp_mpi_sent(&c, cp_mpi_bytes(count, type));
		if (is_root(root, comm))
			cp_mpi_received(&c, cp_mpi_bytes(count, type));
	}
	CP_MPI_END(&c, MPI_Reduce);
	return rc;
}

CP_MPI_EXPORT int MPI_Allreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype type,
				MPI_Op op, MPI_Comm comm)
{
	struct cp_mpi_call c;
	cp_mpi_begin(&c);
	int rc = PMPI_Allreduce(sbuf, rbuf, count, type, op, comm);
	if (c.on) {
		cp_mpi_wait_on(&c, CP_MF_SYNC_MPI_COLL, comm, CP_MF_MPI_NONE, CP_MF_MPI_NONE);
		cp_mpi_sent(&c, cp_mpi_bytes(count, type));
		cp_mpi_received(&c, cp_mpi_bytes(count, type));
	}
	CP_MPI_END(&c, MPI_Allreduce);
	return rc;
}

/* The gathers and scatters: `sends`/`recvs` blocks of count x type each way. */
static void account_blocks(struct cp_mpi_call *c, int sends, int scount, MPI_Datatype stype,
			   int recvs, int rcount, MPI_Datatype rtype)
{
	if (sends > 0)
		cp_mpi_sent(c, (uint64_t)sends * cp_mpi_bytes(scount, stype));
	if (recvs > 0)
		cp_mpi_received(c, (uint64_t)recvs * cp_mpi_bytes(rcount, rtype));
}

/* Blocks sent and received by the root (root_sends, root_recvs) and by the others. */
#define ROOTED_WRAPPER(name, root_sends, root_recvs, sends, recvs)                                 \
	CP_MPI_EXPORT int name(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,       \
			       int rcount, MPI_Datatype rtype, int root, MPI_Comm comm)            \
	{                                                                                          \
		struct cp_mpi_call c;                                                              \
		cp_mpi_begin(&c);                                                                  \
		int rc = P##name(sbuf, scount, stype, rbuf, rcount, rtype, root, comm);            \
		if (c.on)                                                                          \
			cp_mpi_wait_on(&c, CP_MF_SYNC_MPI_COLL, comm, root, CP_MF_MPI_NONE);       \
		if (c.on && is_root(root, comm)) {                                                 \
			int n = cp_mpi_comm_size(comm);                                            \
			account_blocks(&c, root_sends, scount, stype, root_recvs, rcount, rtype);  \
		} else if (c.on) {                                                                 \
			account_blocks(&c, sends, scount, stype, recvs, rcount, rtype);            \
		}                                                                                  \
		CP_MPI_END(&c, name);                                                              \
		return rc;                                                                         \
	}

/* The root's own block, when not in place, counts as one it gives (gather) or gets. */
ROOTED_WRAPPER(MPI_Gather, sbuf != MPI_IN_PLACE, n, 1, 0)
ROOTED_WRAPPER(MPI_Scatter, n, rbuf != MPI_IN_PLACE, 0, 1)

#define ALL_WRAPPER(name, sends, recvs)                                                            \
	CP_MPI_EXPORT int name(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,       \
			       int rcount, MPI_Datatype rtype, MPI_Comm comm)                      \
	{                                                                                          \
		struct cp_mpi_call c;                                                              \
		cp_mpi_begin(&c);                                                                  \
		int rc = P##name(sbuf, scount, stype, rbuf, rcount, rtype, comm);                  \
		if (c.on) {                                                                        \
			cp_mpi_wait_on(&c, CP_MF_SYNC_MPI_COLL, comm, CP_MF_MPI_NONE,              \
				       CP_MF_MPI_NONE);                                            \
			int n = cp_mpi_comm_size(comm);                                            \
			if (sbuf == MPI_IN_PLACE)                                                  \
				account_blocks(&c, sends, rcount, rtype, recvs, rcount, rtype);    \
			else                                                                       \
				account_blocks(&c, sends, scount, stype, recvs, rcount, rtype);    \
		}                                                                                  \
		CP_MPI_END(&c, name);                                                              \
		return rc;                                                                         \
	}

ALL_WRAPPER(MPI_Allgather, 1, n)
ALL_WRAPPER(MPI_Alltoall, n, n)
