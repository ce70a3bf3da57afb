/* Synchronous samples (see sync.h), the init-time half: the trigger families named in
 * CALLPATH_EVENTS and their metrics, start (after the first thread began), the fork
 * child, exit and the notes. Never runs in a signal handler; the recording primitive is
 * in sync.c. */
#include "events/events.h"
#include "runtime/core/sync-internal.h"

#include <stdio.h>
#include <sys/mman.h>

#include "base/sigsafe/sigsafe.h"

static uint32_t sync_requested; /* families asked for by CALLPATH_EVENTS */

static const struct sync_family {
	const char *name;
	uint32_t bit;
	enum cp_sync_id first, last;
	const int *linked;
} families[] = {
    {"alloc", CP_SYNC_ALLOC, CP_SM_ALLOC_BYTES, CP_SM_LEAK_BYTES, &cp_sync_linked_alloc},
    {"io", CP_SYNC_IO, CP_SM_IO_READ_BYTES, CP_SM_IO_CALLS, &cp_sync_linked_io},
    {"wait", CP_SYNC_WAIT, CP_SM_WAIT_TIME, CP_SM_WAIT_CALLS, &cp_sync_linked_wait},
    {"mpi", CP_SYNC_MPI, CP_SM_MPI_TIME, CP_SM_MPI_RECV_MSGS, &cp_sync_linked_mpi},
};

static const struct sync_family *family_find(const char *name, size_t len)
{
	for (size_t i = 0; i < sizeof families / sizeof families[0]; i++)
		if (cp_ss_strlen(families[i].name) == len &&
		    !cp_ss_strncmp(families[i].name, name, len))
			return &families[i];
	return NULL;
}

int cp_sync_is_family(const char *name, size_t len)
{
	return family_find(name, len) != NULL;
}

int cp_sync_config_family(const char *name, size_t len, int has_period)
{
	const struct sync_family *f = family_find(name, len);
	if (!f)
		return 0;
	if (has_period)
		return -1;
	if (sync_requested & f->bit) /* named twice: once is enough */
		return 1;
	if (!f->linked) {
		char lib[64];
		cp_runtime_lib_name(f->bit, lib, sizeof lib);
		fprintf(stderr,
			"callpath runtime: -e %s is not measured: the preloaded runtime has no "
			"wrappers for it (preload %s or another build with '%s' in its name; "
			"callpath record does)\n",
			f->name, lib, f->name);
		return 1;
	}
	if (cp_rt.nmetrics + (f->last - f->first + 1) > CP_MF_MAX_METRICS)
		return -1;
	for (int id = f->first; id <= (int)f->last; id++) {
		struct cp_metric *m = &cp_rt.metrics[cp_rt.nmetrics];
		m->src = &cp_sync_sources[id];
		m->index = cp_rt.nmetrics;
		m->period = 0;
		cp_sync_metric[id] = cp_rt.nmetrics++;
	}
	sync_requested |= f->bit;
	return 1;
}

uint32_t cp_sync_object_slots(void)
{
	return (sync_requested & (CP_SYNC_WAIT | CP_SYNC_MPI)) ? CP_SYNC_OBJECT_SLOTS : 0;
}

/* ---- lifecycle ---- */

void cp_sync_start(void)
{
	if (!sync_requested || !cp_rt.active)
		return;
	if (!cp_sync_guard) {
		void *p =
		    mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED) {
			cp_rt_note("synchronous triggers disabled: no memory for their state");
			return;
		}
		/* Without WIPEONFORK (kernels before 4.14) a child forked inside libc would write
		 * into our files: such a child is rare (daemon() runs our handlers). */
		(void)madvise(p, 4096, MADV_WIPEONFORK);
		cp_sync_guard = p;
	}
	cp_sync_guard->live = 1;
	if ((sync_requested & CP_SYNC_ALLOC) && cp_alloc_start)
		cp_alloc_start();
	__atomic_store_n(&cp_sync_on, sync_requested, __ATOMIC_RELEASE);
}

void cp_sync_after_fork_child(void)
{
	if (!cp_sync_guard || !sync_requested)
		return;
	cp_sync_skipped_busy = 0;
	if (cp_alloc_fork_child)
		cp_alloc_fork_child();
	cp_sync_guard->live = 1;
	__atomic_store_n(&cp_sync_on, sync_requested, __ATOMIC_RELEASE);
}

void cp_sync_fini(int crashed)
{
	uint32_t was = __atomic_exchange_n(&cp_sync_on, 0, __ATOMIC_ACQ_REL);
	if (crashed || !was)
		return;
	if ((was & CP_SYNC_ALLOC) && cp_alloc_attribute_leaks)
		cp_alloc_attribute_leaks();
}

void cp_sync_notes(void)
{
	if (!sync_requested)
		return;
	if (cp_sync_skipped_busy)
		cp_rt_note(
		    "%llu synchronous event(s) (allocation, I/O, wait) happened while the "
		    "runtime was busy on their thread (loading a library, starting a thread, "
		    "or inside a signal handler) and were not attributed",
		    (unsigned long long)cp_sync_skipped_busy);
	if ((sync_requested & CP_SYNC_ALLOC) && cp_alloc_notes)
		cp_alloc_notes();
}
