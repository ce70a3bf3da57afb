/* Per-thread measurement state: a control block in anonymous memory, the thread file
 * (CCT arena) and the armed sample sources. cp_thread_begin is async-signal-safe so that a
 * thread first seen by a sample can be set up inside the handler. */
#include "runtime/core/runtime.h"
#include "runtime/sample/timer.h"
#include "runtime/unwind/unwind.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
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
			__atomic_store_n(&cp_rt.tids[i], t->tid, __ATOMIC_RELEASE);
			uint32_t hw = __atomic_load_n(&cp_rt.tids_hw, __ATOMIC_ACQUIRE);
			while (hw < i + 1 &&
			       !__atomic_compare_exchange_n(&cp_rt.tids_hw, &hw, i + 1, 0,
							    __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
				;
			return 0;
		}
	}
	return -1;
}

/* The thread's name: its own (prctl) or, for an adopted thread, /proc/self/task/TID/comm. */
static void thread_name(struct cp_thread *t, char *name, size_t cap)
{
	if (!t->adopted) {
		prctl(PR_GET_NAME, name, 0, 0, 0);
		return;
	}
	char path[64];
	cp_ss_format(path, sizeof path, "/proc/self/task/%d/comm", (int)t->tid);
	int fd = (int)syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	ssize_t n = syscall(SYS_read, fd, name, cap - 1);
	syscall(SYS_close, fd);
	if (n > 0 && name[n - 1] == '\n')
		n--;
	name[n > 0 ? n : 0] = '\0';
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
	    .rank = cp_rt.rank,
	    .nranks = cp_rt.nranks,
	    .reserve = CP_THREAD_RESERVE,
	    .sync_slots = cp_sync_object_slots(),
	};
	cp_ss_format(path, sizeof path, "%s/%d.%u.%u%s", cp_rt.outdir, (int)cp_rt.pid, cp_rt.gen,
		     t->tidx, CP_MF_THREAD_SUFFIX);
	int rc = cp_cct_create(&t->cct, path, &info);
	if (rc)
		return rc;
	thread_name(t, t->cct.hdr->name, sizeof t->cct.hdr->name);
	return 0;
}

static void sources_start(struct cp_thread *t)
{
	for (uint32_t i = 0; i < cp_rt.nmetrics; i++) {
		struct cp_metric *m = &cp_rt.metrics[i];
		t->src[i].fd = -1;
		if (m->disabled)
			continue;
		if (m->src->thread_start(m, &t->src[i], t->tid) < 0)
			__atomic_add_fetch(&cp_rt.sources_unarmed, 1, __ATOMIC_RELAXED);
	}
}

void cp_thread_sources_stop(struct cp_thread *t)
{
	for (uint32_t i = 0; i < cp_rt.nmetrics; i++)
		cp_rt.metrics[i].src->thread_stop(&cp_rt.metrics[i], &t->src[i]);
}

/* Control block, registry slot and file of thread tid; NULL (counted) on failure. The
 * result is busy (samples dropped) until the caller clears it. AS-safe. */
static struct cp_thread *thread_state_create(pid_t tid, int lazy, int adopted)
{
	void *mem = mmap(NULL, sizeof(struct cp_thread), PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED) {
		__atomic_add_fetch(&cp_rt.threads_unmeasured, 1, __ATOMIC_RELAXED);
		return NULL;
	}
	struct cp_thread *t = mem;
	t->busy = 1;
	for (uint32_t i = 0; i < cp_rt.nmetrics; i++)
		t->src[i].fd = -1; /* nothing to claim before sources_start */
	t->tid = tid;
	t->lazy = lazy;
	t->adopted = adopted;
	t->cpu_start_ns =
	    cp_ss_now_ns(adopted ? cp_thread_cpu_clock(tid) : CLOCK_THREAD_CPUTIME_ID);
	t->tidx = __atomic_fetch_add(&cp_rt.next_tidx, 1, __ATOMIC_ACQ_REL);
	/* One thread that cannot be measured (descriptor or thread limits, full disk) is
	 * counted and noted at exit; the others go on. */
	if (registry_add(t)) {
		munmap(mem, sizeof *t);
		__atomic_add_fetch(&cp_rt.threads_unmeasured, 1, __ATOMIC_RELAXED);
		return NULL;
	}
	if (thread_file(t)) {
		__atomic_store_n(&cp_rt.tids[t->slot], 0, __ATOMIC_RELEASE);
		__atomic_store_n(&cp_rt.threads[t->slot], NULL, __ATOMIC_RELEASE);
		munmap(mem, sizeof *t);
		__atomic_add_fetch(&cp_rt.threads_unmeasured, 1, __ATOMIC_RELAXED);
		return NULL;
	}
	if (cp_rt.phdr) /* "thread files created so far", readable while running */
		__atomic_store_n(&cp_rt.phdr->nthreads,
				 __atomic_load_n(&cp_rt.next_tidx, __ATOMIC_ACQUIRE),
				 __ATOMIC_RELEASE);
	return t;
}

struct cp_thread *cp_thread_begin(int lazy)
{
	if (!cp_rt.active || cp_self)
		return cp_self;
	pid_t tid = cp_ss_gettid();
	/* The task scan may have adopted this thread already (it ran a while before reaching
	 * us): take that state over rather than measuring the thread twice. */
	struct cp_thread *t = cp_thread_find_adopted(tid);
	if (t) {
		/* Published before its sources start (cp_thread_adopt): taken over once they
		 * did, so that the adopter's last stores do not land on the thread's own. The
		 * adopter is another thread, or a scan that ran to its end on this one. */
		while (!__atomic_load_n(&t->armed, __ATOMIC_ACQUIRE))
			sched_yield();
		cp_self = t;
		return t;
	}
	t = thread_state_create(tid, lazy, 0);
	if (!t)
		return NULL;
	if (lazy)
		cp_unwind_thread_init_signal_safe((uintptr_t)__builtin_frame_address(0));
	else
		cp_unwind_thread_init();
	cp_self = t;
	sources_start(t);
	t->busy = 0;
	return t;
}

/* Measures thread tid (not the caller) from now on: state, file and sources routed to it.
 * Its samples find the state by tid (cp_thread_find_adopted), since its TLS may be its
 * creator's (raw clone without CLONE_SETTLS). AS-safe. */
struct cp_thread *cp_thread_adopt(pid_t tid)
{
	uint32_t n = __atomic_load_n(&cp_rt.nadopted, __ATOMIC_ACQUIRE);
	if (n >= CP_MAX_ADOPTED) {
		__atomic_add_fetch(&cp_rt.threads_unmeasured, 1, __ATOMIC_RELAXED);
		return NULL;
	}
	struct cp_thread *t = thread_state_create(tid, 1, 1);
	if (!t)
		return NULL;
	/* Found by its samples before its sources start: the first one may come at once, and
	 * one the thread cannot claim keeps its source's short first period (cputime.c). */
	__atomic_store_n(&cp_rt.adopted[n], t, __ATOMIC_RELEASE);
	__atomic_store_n(&cp_rt.nadopted, n + 1, __ATOMIC_RELEASE);
	sources_start(t);
	t->busy = 0;
	__atomic_store_n(&t->armed, 1, __ATOMIC_RELEASE);
	if (cp_rt_attached()) { /* the thread sets its TLS itself (core/signal.c) */
		siginfo_t si;
		cp_ss_memset(&si, 0, sizeof si);
		si.si_signo = cp_rt.signo;
		si.si_code = SI_QUEUE;
		si.si_pid = cp_rt.pid;
		si.si_uid = getuid();
		si.si_value.sival_int = CP_TLS_MAGIC;
		syscall(SYS_rt_tgsigqueueinfo, cp_rt.pid, tid, cp_rt.signo, &si);
	}
	return t;
}

struct cp_thread *cp_thread_find_adopted(pid_t tid)
{
	uint32_t n = __atomic_load_n(&cp_rt.nadopted, __ATOMIC_ACQUIRE);
	for (uint32_t i = 0; i < n; i++) {
		struct cp_thread *t = __atomic_load_n(&cp_rt.adopted[i], __ATOMIC_ACQUIRE);
		if (t && t->tid == tid)
			return t;
	}
	return NULL;
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
