/* The reduction of callpath-analyze-mpi: partial databases sent up a binomial tree. */
#ifndef CP_MPI_ANALYZE_REDUCE_H
#define CP_MPI_ANALYZE_REDUCE_H

#include "db/db.h"

#include <mpi.h>

struct reduce_stats {
	size_t sent, received; /* bytes of packed partial databases */
	double seconds;	       /* in the reduction (waiting, packing, merging) */
};

/* Merges the partial databases of every rank into rank 0's *db, in rank order: at step s
 * (1, 2, 4...) a rank with bit s sends its database to rank - s and leaves, the others
 * receive from rank + s and merge it after theirs. A rank's database holds consecutive
 * process images, the ranks' ranges in rank order, so rank 0 ends with the database of
 * every image in order. *db is released on the ranks that sent it. 0 or a negative CP_E*
 * code (with cp_error() set) on this rank. */
int mpi_reduce_db(MPI_Comm comm, struct cp_db *db, struct reduce_stats *st);

#endif
