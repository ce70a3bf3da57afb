/* The runtime's side of libcallpath-mpi.so (core/mpi.h): MPI calls as synchronous
 * samples of the "mpi" trigger family (core/sync.h), and the rank MPI_Init confirms. */
#include "runtime/core/mpi.h"
#include "runtime/core/runtime.h"
#include "runtime/core/sync.h"

#include <errno.h>

#include "base/sigsafe/banned.h"

const int cp_sync_linked_mpi = 1; /* the wrappers are in another library: always usable */

CP_EXPORT int callpath_mpi_on(void)
{
	return CP_SYNC_ENABLED(CP_SYNC_MPI);
}

CP_EXPORT void callpath_mpi_record(const void *ra, const void *cfa, const void *caller_fp,
				   const void *fn, const uint64_t values[CALLPATH_MPI_NVALUES])
{
	if (!CP_SYNC_ENABLED(CP_SYNC_MPI))
		return;
	int saved = errno;
	struct cp_sync_value v[CALLPATH_MPI_NVALUES];
	unsigned n = 0;
	for (unsigned i = 0; i < CALLPATH_MPI_NVALUES; i++)
		if (values[i]) {
			v[n].metric = cp_sync_metric[CP_SM_MPI_TIME + i];
			v[n++].value = values[i];
		}
	if (n)
		cp_sync_record_callee(ra, cfa, caller_fp, (uintptr_t)fn, v, n);
	errno = saved;
}
