/* The runtime's side of libcallpath-mpi.so (core/mpi.h): MPI calls as synchronous
 * samples of the "mpi" trigger family (core/sync.h), and the rank MPI_Init confirms. */
#include "runtime/core/mpi.h"
#include "runtime/core/runtime.h"
#include "runtime/core/sync.h"
#include "base/sigsafe/sigsafe.h"

#include <errno.h>
#include <string.h>

#include "base/sigsafe/banned.h"

const int cp_sync_linked_mpi = 1; /* the wrappers are in another library: always usable */

CP_EXPORT int callpath_mpi_on(void)
{
	return CP_SYNC_ENABLED(CP_SYNC_MPI);
}

static void mpi_record(const void *ra, const void *cfa, const void *caller_fp, const void *fn,
		       const uint64_t values[CALLPATH_MPI_NVALUES],
		       const struct cp_sync_object *obj)
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
		cp_sync_record_callee(ra, cfa, caller_fp, (uintptr_t)fn, v, n, obj);
	errno = saved;
}

CP_EXPORT void callpath_mpi_record(const void *ra, const void *cfa, const void *caller_fp,
				   const void *fn, const uint64_t values[CALLPATH_MPI_NVALUES])
{
	mpi_record(ra, cfa, caller_fp, fn, values, NULL);
}

CP_EXPORT void callpath_mpi_record_wait(const void *ra, const void *cfa, const void *caller_fp,
					const void *fn, const uint64_t values[CALLPATH_MPI_NVALUES],
					const struct callpath_mpi_wait *w)
{
	int known = w && w->kind >= CP_MF_SYNC_MPI_RECV && w->kind <= CP_MF_SYNC_MPI_COLL;
	struct cp_sync_object obj = {
	    known ? w->comm : 0,
	    known ? CP_MF_MPI_AUX(w->peer, w->tag) : 0,
	    values[CALLPATH_MPI_TIME],
	    known ? (uint16_t)w->kind : 0,
	};
	mpi_record(ra, cfa, caller_fp, fn, values,
		   known && values[CALLPATH_MPI_TIME] ? &obj : NULL);
}

CP_EXPORT void callpath_mpi_comm_name(uint32_t comm, const char *name)
{
	if (!CP_SYNC_ENABLED(CP_SYNC_MPI) || !name)
		return;
	int saved = errno;
	char buf[sizeof(struct cp_mf_mpi_comm) + 128]; /* MPI_MAX_OBJECT_NAME is 64 or 128 */
	struct cp_mf_mpi_comm c = {comm};
	memcpy(buf, &c, sizeof c);
	size_t len = cp_ss_strlcpy(buf + sizeof c, name, sizeof buf - sizeof c);
	if (len >= sizeof buf - sizeof c)
		len = sizeof buf - sizeof c - 1;
	cp_proc_record(CP_MF_REC_MPI_COMM, buf, (uint32_t)(sizeof c + len + 1));
	errno = saved;
}
