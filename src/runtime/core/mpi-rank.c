/* MPI_Init's rank (core/mpi.h), into the headers: init-time (it takes the threads' lock),
 * called by libcallpath-mpi.so right after MPI_Init returns. */
#include "runtime/core/mpi.h"
#include "runtime/core/runtime.h"

CP_EXPORT void callpath_mpi_rank(int rank, int size)
{
	if (!cp_rt.active || rank < 0 || size <= rank)
		return;
	pthread_mutex_lock(&cp_rt.threads_lock);
	cp_rt.rank = rank;
	cp_rt.nranks = (uint32_t)size;
	if (cp_rt.phdr) {
		cp_rt.phdr->h.rank = rank;
		cp_rt.phdr->h.nranks = (uint32_t)size;
	}
	for (uint32_t i = 0; i < CP_MAX_THREADS; i++) {
		struct cp_thread *t = cp_rt.threads[i];
		if (t && t->cct.hdr) {
			t->cct.hdr->h.rank = rank;
			t->cct.hdr->h.nranks = (uint32_t)size;
		}
	}
	pthread_mutex_unlock(&cp_rt.threads_lock);
}
