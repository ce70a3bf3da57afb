/* Process start and end of the runtime: configuration, the process file, load modules,
 * sample sources, the signal handler and the first thread; fini at exit, crash, exec and
 * in fork children. */
#include "base/mpi-env.h"
#include "runtime/core/runtime.h"
#include "runtime/probe/probe.h"
#include "runtime/core/sync.h"
#include "runtime/unwind/modules.h"
#include "runtime/unwind/unwind.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/sigsafe/sigsafe.h"

struct cp_runtime cp_rt;
extern const struct cp_modules_listener cp_proc_module_listener CP_HIDDEN;

void cp_rt_fail(const char *why)
{
	if (!__atomic_exchange_n(&cp_rt.enabled, 0, __ATOMIC_ACQ_REL))
		return;
	cp_rt.failure = why;
	__atomic_store_n(&cp_rt.note_pending, 1, __ATOMIC_RELEASE);
}

static void metrics_init(void)
{
	for (uint32_t i = 0; i < cp_rt.nmetrics; i++) {
		struct cp_metric *m = &cp_rt.metrics[i];
		if (m->src->process_init(m))
			m->disabled = 1;
		cp_rt.phdr->metrics[i].mechanism = m->mechanism;
	}
}

static int modules_start(int replay)
{
	if (replay) {
		cp_modules_replay();
		return 0;
	}
	int rc = cp_modules_init(&cp_proc_module_listener);
	if (!rc)
		rc = cp_modules_sync();
	if (!rc)
		rc = cp_unwind_init();
	const struct cp_module *self = rc ? NULL : cp_modules_find((uintptr_t)cp_rt_init);
#ifdef CP_RT_STATIC /* linked into the program (libcallpath-rt.a): its module is the program's */
	self = NULL;
#endif
	if (self) { /* what cp_rt_owns_pc tests */
		cp_rt.self_lo = self->text_lo;
		cp_rt.self_len = self->text_hi - self->text_lo;
	}
	if (!rc) /* probed calls' return addresses: the real ones are on the probes' stack */
		cp_unwind_set_return_hook((uintptr_t)cp_probe_return, cp_probe_real_ra);
	if (rc)
		cp_rt_note("load-module registry or unwinder failed to start (%d); "
			   "profiling disabled",
			   rc);
	return rc;
}

/* Everything but configuration, shared by process start and fork children. */
static int image_start(int after_fork, int rearm)
{
	/* A fork child's parent is the image it was copied from, even when that has exited
	 * already (daemon(): the parent _exits at once and getppid() says 1). */
	cp_rt.ppid = after_fork ? cp_rt.pid : (int32_t)getppid();
	cp_rt.pid = (int32_t)getpid();
	cp_rt.next_tidx = 0;
	int nranks = 0;
	cp_rt.rank = cp_mpi_env_rank(&nranks);
	cp_rt.nranks = (uint32_t)nranks;
	if (cp_proc_create())
		return -1;
	cp_proc_write_cmdline();
	if (after_fork) /* the relation is in the header (ppid, flag), not in a NOTE */
		__atomic_or_fetch(&cp_rt.phdr->h.flags, CP_MF_FORK_CHILD, __ATOMIC_RELEASE);
	if (modules_start(after_fork || rearm)) /* the registry of the same image */
		return -1;
	if (!after_fork)
		metrics_init();
	cp_rt.enabled = 1;
	cp_rt.active = 1;
	return 0;
}

void cp_rt_init(void)
{
	static int done;
	if (done++)
		return;
	cp_rt.cpu_start_ns = cp_ss_now_ns(CLOCK_PROCESS_CPUTIME_ID);
	cp_real_init();
	pthread_mutex_init(&cp_rt.threads_lock, NULL);
	cp_fork_hooks_install();
	if (!cp_config_load(0))
		cp_rt_start(0);
}

/* After the configuration: at process start (attached 0), or when `callpath attach
 * --inject` armed a runtime it loaded into a running program (core/attach.c: 1 the first
 * time, 2 when re-arming a dormant one; the program's threads exist already and the scan
 * adopts them at once). 0, or -1 if profiling is off. */
int cp_rt_start(int attached)
{
	if (image_start(0, attached == 2)) {
		cp_rt.active = 0;
		return -1;
	}
	if (attached != 2 && cp_signal_install()) {
		cp_rt_note("cannot install the handler for signal %d: %s; profiling disabled",
			   cp_rt.signo, strerror(errno));
		cp_rt.enabled = 0;
		return -1;
	}
	if (attached != 2) {
		cp_signal_fatal_install();
		if (cp_probe_enabled())
			cp_livepatch_install(); /* after the fatal handlers: ours chains to them */
	}
	/* Attached: the scan adopts every thread, this one too (no thread's TLS is set). */
	if (!attached)
		cp_startup_charge(cp_thread_begin(0));
	cp_rt.cpu_armed_ns = cp_ss_now_ns(CLOCK_PROCESS_CPUTIME_ID); /* sampling from here */
	cp_sync_start();
	/* Before any thread of the program exists: the entry jumps are written without
	 * racing other threads (docs/internals/patch.md). */
	cp_probe_sync(0);
	cp_adopt_start();
	cp_control_start(); /* after the scan's first pass: its thread is not the program's */
	return 0;
}

/* For metrics on the tick-based fallback: the rate actually delivered, over the threads
 * still registered (their headers are final by now). */
static void note_fallback_rates(void)
{
	for (uint32_t m = 0; m < cp_rt.nmetrics; m++) {
		const struct cp_metric *met = &cp_rt.metrics[m];
		if (met->mechanism != CP_MF_MECH_POSIX_TIMER ||
		    met->src->source != CP_MF_SRC_CPUTIME)
			continue;
		uint64_t samples = 0, cpu = 0;
		for (uint32_t i = 0; i < CP_MAX_THREADS; i++) {
			struct cp_thread *t = cp_rt.threads[i];
			if (t && t->cct.hdr) {
				samples += t->cct.hdr->samples[m];
				cpu += t->cct.hdr->cpu_ns;
			}
		}
		if (cpu)
			cp_rt_note("%s: delivered %.0f samples per CPU second (asked %.0f) with "
				   "the POSIX-timer fallback",
				   met->src->name, (double)samples * 1e9 / (double)cpu,
				   1e9 / (double)met->period);
	}
}

/* Threads alive now that the runtime never saw start (created by raw clone or inside
 * libc without pthread_create's PLT entry): counted, since they were not measured. */
static void note_unseen_threads(void)
{
	DIR *d = opendir("/proc/self/task");
	if (!d)
		return;
	unsigned unseen = 0;
	for (struct dirent *e; (e = readdir(d));) {
		int tid = atoi(e->d_name);
		if (tid <= 0)
			continue;
		int seen = 0;
		for (uint32_t i = 0; i < CP_MAX_THREADS && !seen; i++) {
			struct cp_thread *t = cp_rt.threads[i];
			seen = t && t->tid == tid;
		}
		unseen += !seen && tid != cp_rt.control_tid;
	}
	closedir(d);
	if (unseen)
		cp_rt_note("%u thread(s) alive at exit were never measured (not started "
			   "through pthread_create)",
			   unseen);
}

/* What the user should know, at exit: failures, fallbacks, what was not measured. */
static void notes_at_exit(void)
{
	cp_proc_flush_pending_note();
	note_fallback_rates();
	note_unseen_threads();
	if (cp_rt.threads_unmeasured)
		cp_rt_note("%u thread(s) could not be measured (no thread file: descriptor or "
			   "thread limits, or the disk is full)",
			   cp_rt.threads_unmeasured);
	if (cp_rt.sources_unarmed)
		cp_rt_note("%u time(s) a thread's sample source could not be started (descriptor "
			   "limit?); those threads miss that metric",
			   cp_rt.sources_unarmed);
	if (cp_rt.orphan_events)
		cp_rt_note("%llu sampling event(s) that no thread's state held any more were "
			   "disabled",
			   (unsigned long long)cp_rt.orphan_events);
	if (cp_rt.dropped_nothread)
		cp_rt_note("%llu samples arrived on threads without measurement state and were "
			   "dropped",
			   (unsigned long long)cp_rt.dropped_nothread);
}

/* crashed_sig != 0: called from the fatal-signal handler, AS-safe path only. */
int cp_rt_foreign_child(void)
{
	return cp_rt.active && cp_ss_getpid() != cp_rt.pid;
}

void cp_rt_fini(int crashed_sig)
{
	/* Finishing the parent's state from a foreign child would end the parent's profile,
	 * through the shared mappings and perf events. */
	if (cp_rt_foreign_child())
		return;
	if (!cp_rt.active || __atomic_exchange_n(&cp_rt.finished, 1, __ATOMIC_ACQ_REL))
		return;
	int was_enabled = __atomic_exchange_n(&cp_rt.enabled, 0, __ATOMIC_ACQ_REL);
	cp_adopt_stop();
	if (!was_enabled && cp_rt.failure)
		cp_rt.enabled = 0;
	/* The crash path cannot wait for a lock its own thread may hold. */
	int locked = crashed_sig ? !pthread_mutex_trylock(&cp_rt.threads_lock)
				 : !pthread_mutex_lock(&cp_rt.threads_lock);
	cp_sync_fini(crashed_sig); /* leaks into the threads' files, before they finish */
	cp_rt.cpu_fini_ns = cp_ss_now_ns(CLOCK_PROCESS_CPUTIME_ID); /* sampling ends here */
	cp_thread_finish_all();
	if (!crashed_sig) {
		notes_at_exit();
		cp_sync_notes();
		cp_perf_notes();
		cp_probe_notes();
	}
	if (!was_enabled && cp_rt.failure)
		__atomic_or_fetch(&cp_rt.phdr->h.flags, CP_MF_DISABLED, __ATOMIC_RELEASE);
	cp_proc_finish(crashed_sig);
	cp_control_stop(cp_rt.phdr && (cp_rt.phdr->h.flags & CP_MF_EXEC_ENDED));
	/* One file per image that ended normally; a crashing one leaves its files as they are
	 * (packing takes locks and time a dying process may not have). */
	if (!crashed_sig) {
		cp_thread_pack_all();
		cp_proc_cpu_end();
		cp_proc_trim();
	}
	if (locked)
		pthread_mutex_unlock(&cp_rt.threads_lock);
}

void cp_rt_after_fork_child(void)
{
	if (!cp_rt.active)
		return;
	cp_rt.cpu_start_ns = cp_ss_now_ns(CLOCK_PROCESS_CPUTIME_ID);
	/* The inherited mappings are the parent's files: forget them unwritten. */
	pthread_mutex_init(&cp_rt.threads_lock, NULL);
	cp_probe_before_fork_forget();
	cp_control_after_fork();
	cp_thread_forget_all_but_self();
	cp_arena_abandon(&cp_rt.proc);
	cp_rt.phdr = NULL;
	cp_rt.finished = 0;
	cp_rt.note_pending = 0;
	cp_rt.exit_status_known = 0;
	int was_enabled = cp_rt.enabled;
	if (image_start(1, 0)) {
		cp_rt.active = 0;
		return;
	}
	cp_rt.enabled = was_enabled;
	for (uint32_t i = 0; i < cp_rt.nmetrics; i++)
		cp_rt.phdr->metrics[i].mechanism = cp_rt.metrics[i].mechanism;
	cp_thread_begin(0);
	cp_rt.cpu_armed_ns = cp_ss_now_ns(CLOCK_PROCESS_CPUTIME_ID);
	cp_probe_after_fork();
	cp_sync_after_fork_child();
	cp_adopt_start();
	cp_control_start(); /* the child's own channel, after the scan's first pass */
}

void cp_rt_before_exec(void)
{
	if (!cp_rt.active)
		return;
	__atomic_or_fetch(&cp_rt.phdr->h.flags, CP_MF_EXEC_ENDED, __ATOMIC_RELEASE);
	cp_rt_fini(0);
}

void cp_rt_exec_failed(void)
{
	if (!cp_rt.active || !cp_rt.phdr)
		return;
	/* Resume: the image goes on. Headers stay marked finished up to here; new samples
	 * still land in the same files. */
	__atomic_and_fetch(&cp_rt.phdr->h.flags, ~(uint32_t)(CP_MF_FINISHED | CP_MF_EXEC_ENDED),
			   __ATOMIC_RELEASE);
	cp_rt.finished = 0;
	cp_rt.enabled = 1;
	cp_rt_note("exec failed: profiling resumed");
	cp_adopt_start();
	cp_sync_start();
	cp_thread_unpack_self();
	struct cp_thread *self = cp_self;
	if (self) {
		self->stopped = 0;
		__atomic_and_fetch(&self->cct.hdr->h.flags, ~(uint32_t)CP_MF_FINISHED,
				   __ATOMIC_RELEASE);
		for (uint32_t i = 0; i < cp_rt.nmetrics; i++)
			if (!cp_rt.metrics[i].disabled)
				cp_rt.metrics[i].src->thread_start(&cp_rt.metrics[i], &self->src[i],
								   self->tid);
	}
}

__attribute__((constructor(101))) static void cp_rt_constructor(void)
{
	cp_rt_init();
}

__attribute__((destructor(101))) static void cp_rt_destructor(void)
{
	cp_rt_fini(0);
}
