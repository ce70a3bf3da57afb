/* The end of threads: a thread's own end (pthread key destructor), every thread's at
 * process exit, and the fork child's cleanup. Not signal-time code, except
 * cp_thread_finish_all on the crash path (stores and system calls only). */
#include "runtime/core/runtime.h"

#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "base/sigsafe/sigsafe.h"

/* Removes t from the adopted list; 1 if it was there. */
static int adopted_forget(struct cp_thread *t)
{
	int found = 0;
	for (uint32_t i = 0; i < cp_rt.nadopted; i++) {
		if (cp_rt.adopted[i] == t) {
			__atomic_store_n(&cp_rt.adopted[i], NULL, __ATOMIC_RELEASE);
			found = 1;
		}
	}
	return found;
}

/* The thread's file into the process file, then unlinked: a SIGKILL between the two
 * leaves both, and the reader ignores the file (format/measure.h, "Packing"). */
static int thread_pack(struct cp_thread *t)
{
	if (t->packed)
		return 0;
	if (cp_rt.no_pack || !t->cct.hdr || cp_proc_pack(t->cct.hdr))
		return -1;
	unlink(t->cct.arena.path);
	t->packed = 1;
	return 0;
}

void cp_thread_end(struct cp_thread *t, int finished)
{
	if (!t)
		return;
	t->busy = 1;
	t->stopped = 1;
	cp_thread_sources_stop(t);
	cp_thread_header_finish(t, cp_ss_now_ns(CLOCK_THREAD_CPUTIME_ID));
	if (cp_self == t)
		cp_self = NULL;
	pthread_mutex_lock(&cp_rt.threads_lock);
	__atomic_store_n(&cp_rt.tids[t->slot], 0, __ATOMIC_RELEASE);
	__atomic_store_n(&cp_rt.threads[t->slot], NULL, __ATOMIC_RELEASE);
	if (finished && !thread_pack(t))
		cp_cct_abandon(&t->cct);
	else
		cp_cct_close(&t->cct, finished); /* the file stays, trimmed to its contents */
	/* An adopted block (a pthread thread the scan took first) may be read by a handler
	 * searching the adopted list right now: unlisted, and left mapped. */
	if (!adopted_forget(t))
		munmap(t, sizeof *t);
	pthread_mutex_unlock(&cp_rt.threads_lock);
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
 * (other threads may still run until the process is gone). The caller holds threads_lock
 * (or, on the crash path, tried to). */
void cp_thread_finish_all(void)
{
	for (uint32_t i = 0; i < CP_MAX_THREADS; i++) {
		struct cp_thread *t = __atomic_load_n(&cp_rt.threads[i], __ATOMIC_ACQUIRE);
		if (!t)
			continue;
		t->stopped = 1;
		cp_thread_sources_stop(t);
		cp_thread_header_finish(t, t == cp_self ? cp_ss_now_ns(CLOCK_THREAD_CPUTIME_ID)
							: thread_cpu_ns(t->tid));
		__atomic_or_fetch(&t->cct.hdr->h.flags, CP_MF_FINISHED, __ATOMIC_RELEASE);
	}
}

void cp_thread_pack_all(void)
{
	for (uint32_t i = 0; i < CP_MAX_THREADS; i++) {
		struct cp_thread *t = __atomic_load_n(&cp_rt.threads[i], __ATOMIC_ACQUIRE);
		if (t && thread_pack(t) && t == cp_self)
			cp_arena_trim(&t->cct.arena, t->cct.hdr->h.used);
	}
}

void cp_thread_unpack_self(void)
{
	struct cp_thread *t = cp_self;
	if (!t || !t->packed || !t->cct.hdr)
		return;
	int rc = cp_arena_relink(&t->cct.arena);
	if (rc) {
		cp_rt_note("exec failed, and the thread file %s could not be created again (%s); "
			   "this thread's samples after the exec are lost",
			   t->cct.arena.path, strerror(-rc));
		return;
	}
	t->packed = 0;
	cp_proc_unpack(t->tidx);
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
		cp_rt.tids[i] = 0;
		for (uint32_t m = 0; m < cp_rt.nmetrics; m++)
			cp_perf_fd_close(&t->src[m], 0);
		cp_cct_abandon(&t->cct);
		munmap(t, sizeof *t);
	}
	for (uint32_t i = 0; i < CP_MAX_ADOPTED; i++)
		cp_rt.adopted[i] = NULL;
	cp_rt.nadopted = 0;
	cp_self = NULL;
}

/* A dormant attached runtime re-armed (core/attach.c): every state leaves the registry,
 * its sources closed, but stays mapped: a thread's TLS may still point at it until the new
 * state's signal replaces it (a late sample then lands in the old, finished tree). */
void cp_thread_drop_all(void)
{
	for (uint32_t i = 0; i < CP_MAX_THREADS; i++) {
		struct cp_thread *t = cp_rt.threads[i];
		if (!t)
			continue;
		t->stopped = 1;
		for (uint32_t m = 0; m < cp_rt.nmetrics; m++)
			cp_perf_fd_close(&t->src[m], 0);
		__atomic_store_n(&cp_rt.threads[i], NULL, __ATOMIC_RELEASE);
		cp_rt.tids[i] = 0;
	}
	for (uint32_t i = 0; i < CP_MAX_ADOPTED; i++)
		cp_rt.adopted[i] = NULL;
	cp_rt.nadopted = 0;
}
