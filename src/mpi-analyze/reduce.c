/* Binomial-tree reduction of partial databases (reduce.h). */
#include "mpi-analyze/reduce.h"

#include "base/error.h"
#include "base/strbuf.h"
#include "base/xalloc.h"

#include <limits.h>
#include <stdlib.h>

/* Messages in pieces of at most CHUNK bytes (MPI counts are ints). */
#define CHUNK (1 << 30)
#define TAG_SIZE 1
#define TAG_DATA 2

static int send_db(MPI_Comm comm, int to, struct cp_db *db, struct reduce_stats *st)
{
	struct strbuf sb;
	strbuf_init(&sb);
	cp_db_pack(db, &sb);
	cp_db_release(db);
	unsigned long long size = sb.len;
	int rc = MPI_Send(&size, 1, MPI_UNSIGNED_LONG_LONG, to, TAG_SIZE, comm);
	for (size_t off = 0; rc == MPI_SUCCESS && off < sb.len; off += CHUNK) {
		size_t n = sb.len - off < CHUNK ? sb.len - off : CHUNK;
		rc = MPI_Send(sb.buf + off, (int)n, MPI_BYTE, to, TAG_DATA, comm);
	}
	st->sent += sb.len;
	strbuf_release(&sb);
	return rc == MPI_SUCCESS ? 0 : cp_error(CP_EIO, "MPI_Send to rank %d failed", to);
}

static int recv_merge(MPI_Comm comm, int from, struct cp_db *db, struct reduce_stats *st)
{
	unsigned long long size = 0;
	if (MPI_Recv(&size, 1, MPI_UNSIGNED_LONG_LONG, from, TAG_SIZE, comm, MPI_STATUS_IGNORE) !=
	    MPI_SUCCESS)
		return cp_error(CP_EIO, "MPI_Recv from rank %d failed", from);
	char *buf = xmalloc(size ? size : 1);
	for (size_t off = 0; off < size; off += CHUNK) {
		size_t n = size - off < CHUNK ? size - off : CHUNK;
		if (MPI_Recv(buf + off, (int)n, MPI_BYTE, from, TAG_DATA, comm,
			     MPI_STATUS_IGNORE) != MPI_SUCCESS) {
			free(buf);
			return cp_error(CP_EIO, "MPI_Recv from rank %d failed", from);
		}
	}
	st->received += size;
	struct cp_db part;
	int rc = cp_db_unpack(&part, buf, size);
	free(buf);
	if (rc)
		return cp_error(rc, "from rank %d: %s", from, cp_error_message());
	rc = cp_db_merge(db, &part);
	cp_db_release(&part);
	return rc;
}

int mpi_reduce_db(MPI_Comm comm, struct cp_db *db, struct reduce_stats *st)
{
	int rank, size;
	MPI_Comm_rank(comm, &rank);
	MPI_Comm_size(comm, &size);
	double t0 = MPI_Wtime();
	int rc = 0;
	for (int step = 1; step < size && !rc; step <<= 1) {
		if (rank & step) {
			rc = send_db(comm, rank - step, db, st);
			break;
		}
		if (rank + step < size)
			rc = recv_merge(comm, rank + step, db, st);
	}
	st->seconds = MPI_Wtime() - t0;
	return rc;
}
