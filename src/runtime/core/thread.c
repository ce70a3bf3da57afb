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
			cp_rt_fail("a sample source could not be armed on a thread");
	}
}

static void sources_stop(struct cp_thread *t)
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
	if (mem == MAP_FAILED)
		return NULL;
	struct cp_thread *t = mem;
	t->busy = 1;
	t->tid = cp_ss_gettid();
	t->lazy = lazy;
	t->cpu_start_ns = cp_ss_now_ns(CLOCK_THREAD_CPUTIME_ID);
	t->tidx = __atomic_fetch_add(&cp_rt.next_tidx, 1, __ATOMIC_ACQ_REL);
	if (thread_file(t) || registry_add(t)) {
		if (t->cct.hdr)
			cp_cct_close(&t->cct, 0);
		munmap(mem, sizeof *t);
		cp_rt_fail("could not create a thread file (disk full or too many threads?)");
		return NULL;
	}
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
static void thread_header_finish(struct cp_thread *t, uint64_t cpu_ns)
{
	struct cp_mf_thread *h = t->cct.hdr;
	if (!h)
		return;
	h->end_ns = cp_ss_now_ns(CLOCK_REALTIME);
	if (cpu_ns > t->cpu_start_ns)
		h->cpu_ns = cpu_ns - t->cpu_start_ns;
}

void cp_thread_end(struct cp_thread *t, int finished)
{
	if (!t)
		return;
	t->busy = 1;
	t->stopped = 1;
	sources_stop(t);
	thread_header_finish(t, cp_ss_now_ns(CLOCK_THREAD_CPUTIME_ID));
	if (cp_self == t)
		cp_self = NULL;
	__atomic_store_n(&cp_rt.threads[t->slot], NULL, __ATOMIC_RELEASE);
	cp_cct_close(&t->cct, finished);
	munmap(t, sizeof *t);
}

/* Thread CPU time of another thread, through its clock id (glibc's pthread_getcpuclockid
 * formula, computed by hand: a raw syscall on a tid clock). */
static uint64_t thread_cpu_ns(pid_t tid)
{
	struct timespec ts;
	clockid_t clk = (clockid_t)((~(unsigned)tid << 3) | 6); /* CPUCLOCK_SCHED, per-thread */
	if (syscall(SYS_clock_gettime, clk, &ts))
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Process exit: stop every thread's sampling and finish its header; the mappings stay
 * (other threads may still run until the process is gone). */
void cp_thread_finish_all(void)
{
	for (uint32_t i = 0; i < CP_MAX_THREADS; i++) {
		struct cp_thread *t = __atomic_load_n(&cp_rt.threads[i], __ATOMIC_ACQUIRE);
		if (!t)
			continue;
		t->stopped = 1;
		sources_stop(t);
		thread_header_finish(t, t == cp_self ? cp_ss_now_ns(CLOCK_THREAD_CPUTIME_ID)
						     : thread_cpu_ns(t->tid));
		__atomic_or_fetch(&t->cct.hdr->h.flags, CP_MF_FINISHED, __ATOMIC_RELEASE);
	}
}

/* Fork child: every inherited thread file mapping is shared with the parent's file, so
 * drop them all without writing; the surviving thread starts afresh. */
void cp_thread_forget_all_but_self(void)
{
	for (uint32_t i = 0; i < CP_MAX_THREADS; i++) {
		struct cp_thread *t = cp_rt.threads[i];
		if (!t)
			continue;
		cp_rt.threads[i] = NULL;
		for (uint32_t m = 0; m < cp_rt.nmetrics; m++)
			if (t->src[m].fd >= 0)
				close(t->src[m].fd);
		cp_cct_abandon(&t->cct);
		munmap(t, sizeof *t);
	}
	cp_self = NULL;
}
