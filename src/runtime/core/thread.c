/* Per-thread measurement state: a control block in anonymous memory, the thread file
 * (CCT arena) and the armed sample sources. cp_thread_begin is async-signal-safe so that a
 * thread first seen by a sample can be set up inside the handler. */
#include "runtime/core/runtime.h"
#include "runtime/unwind/unwind.h"

#include <errno.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "base/sigsafe/sigsafe.h"
#include "base/sigsafe/banned.h"

/* Virtual space reserved per thread file: ~5M nodes of 32 bytes; only what is used is
 * backed by the file. */
#define CP_THREAD_RESERVE (160ul << 20)

__thread struct cp_thread *cp_self;

static int registry_add(struct cp_thread *t)
{
	for (uint32_t i = 0; i < CP_MAX_THREADS; i++) {
		struct cp_thread *expected = NULL;
		if (!cp_rt.threads[i] &&
		    __atomic_compare_exchange_n(&cp_rt.threads[i], &expected, t, 0,
						__ATOMIC_ACQ_REL, __ATOMIC_RELAXED)) {
			t->slot = i;
			return 0;
		}
	}
	return -1;
}

static int thread_file(struct cp_thread *t)
{
	char path[PATH_MAX];
	struct cp_cct_info info = {
		.pid = cp_rt.pid,
		.tid = t->tid,
		.gen = cp_rt.gen,
		.tidx = t->tidx,
		.nmetrics = cp_rt.nmetrics,
		.start_ns = cp_ss_now_ns(CLOCK_REALTIME),
		.reserve = CP_THREAD_RESERVE,
	};
	cp_ss_format(path, sizeof path, "%s/%d.%u.%u%s", cp_rt.outdir, (int)cp_rt.pid, cp_rt.gen,
		     t->tidx, CP_MF_THREAD_SUFFIX);
	int rc = cp_cct_create(&t->cct, path, &info);
	if (rc)
		return rc;
	prctl(PR_GET_NAME, t->cct.hdr->name, 0, 0, 0);
	return 0;
}

static void sources_start(struct cp_thread *t)
{
	for (uint32_t i = 0; i < cp_rt.nmetrics; i++) {
		struct cp_metric *m = &cp_rt.metrics[i];
		t->src[i].fd = -1;
		if (m->disabled)
			continue;
		if (m->src->thread_start(m, &t->src[i]) < 0)
			__atomic_add_fetch(&cp_rt.sources_unarmed, 1, __ATOMIC_RELAXED);
	}
}

void cp_thread_sources_stop(struct cp_thread *t)
{
	for (uint32_t i = 0; i < cp_rt.nmetrics; i++)
		cp_rt.metrics[i].src->thread_stop(&cp_rt.metrics[i], &t->src[i]);
}

struct cp_thread *cp_thread_begin(int lazy)
{
	if (!cp_rt.active || cp_self)
		return cp_self;
	void *mem = mmap(NULL, sizeof(struct cp_thread), PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED) {
		__atomic_add_fetch(&cp_rt.threads_unmeasured, 1, __ATOMIC_RELAXED);
		return NULL;
	}
	struct cp_thread *t = mem;
	t->busy = 1;
	t->tid = cp_ss_gettid();
	t->lazy = lazy;
	t->cpu_start_ns = cp_ss_now_ns(CLOCK_THREAD_CPUTIME_ID);
	t->tidx = __atomic_fetch_add(&cp_rt.next_tidx, 1, __ATOMIC_ACQ_REL);
	/* One thread that cannot be measured (descriptor or thread limits, full disk) is
	 * counted and noted at exit; the others go on. */
	if (registry_add(t)) {
		munmap(mem, sizeof *t);
		__atomic_add_fetch(&cp_rt.threads_unmeasured, 1, __ATOMIC_RELAXED);
		return NULL;
	}
	if (thread_file(t)) {
		__atomic_store_n(&cp_rt.threads[t->slot], NULL, __ATOMIC_RELEASE);
		munmap(mem, sizeof *t);
		__atomic_add_fetch(&cp_rt.threads_unmeasured, 1, __ATOMIC_RELAXED);
		return NULL;
	}
	if (cp_rt.phdr) /* "thread files created so far", readable while running */
		__atomic_store_n(&cp_rt.phdr->nthreads,
				 __atomic_load_n(&cp_rt.next_tidx, __ATOMIC_ACQUIRE), __ATOMIC_RELEASE);
	if (lazy)
		cp_unwind_thread_init_signal_safe((uintptr_t)__builtin_frame_address(0));
	else
		cp_unwind_thread_init();
	cp_self = t;
	sources_start(t);
	t->busy = 0;
	return t;
}

/* Writes the exit-time fields of a thread's header. */
void cp_thread_header_finish(struct cp_thread *t, uint64_t cpu_ns)
{
	struct cp_mf_thread *h = t->cct.hdr;
	if (!h)
		return;
	h->end_ns = cp_ss_now_ns(CLOCK_REALTIME);
	if (cpu_ns > t->cpu_start_ns)
		h->cpu_ns = cpu_ns - t->cpu_start_ns;
}
