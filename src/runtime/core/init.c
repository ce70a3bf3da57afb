/* Process start and end of the runtime: configuration, the process file, load modules,
 * sample sources, the signal handler and the first thread; fini at exit, crash, exec and
 * in fork children. */
#include "runtime/core/runtime.h"
#include "runtime/unwind/modules.h"
#include "runtime/unwind/unwind.h"

#include <errno.h>
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
	if (rc)
		cp_rt_note("load-module registry or unwinder failed to start (%d); "
			   "profiling disabled",
			   rc);
	return rc;
}

/* Everything but configuration, shared by process start and fork children. */
static int image_start(int after_fork)
{
	cp_rt.pid = (int32_t)getpid();
	cp_rt.next_tidx = 0;
	if (cp_proc_create())
		return -1;
	cp_proc_write_cmdline();
	if (after_fork)
		cp_rt_note("fork child of process %d", (int)getppid());
	if (modules_start(after_fork))
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
	cp_real_init();
	if (cp_config_load())
		return;
	if (image_start(0)) {
		cp_rt.active = 0;
		return;
	}
	if (cp_signal_install()) {
		cp_rt_note("cannot install the handler for signal %d: %s; profiling disabled",
			   cp_rt.signo, strerror(errno));
		cp_rt.enabled = 0;
		return;
	}
	cp_signal_fatal_install();
	cp_thread_begin(0);
}

/* Summarises fallbacks whose delivered rate the user should know, at exit. */
static void notes_at_exit(void)
{
	cp_proc_flush_pending_note();
	if (cp_rt.dropped_nothread)
		cp_rt_note("%llu samples arrived on threads without measurement state and were "
			   "dropped",
			   (unsigned long long)cp_rt.dropped_nothread);
}

/* crashed_sig != 0: called from the fatal-signal handler, AS-safe path only. */
void cp_rt_fini(int crashed_sig)
{
	if (!cp_rt.active || __atomic_exchange_n(&cp_rt.finished, 1, __ATOMIC_ACQ_REL))
		return;
	int was_enabled = __atomic_exchange_n(&cp_rt.enabled, 0, __ATOMIC_ACQ_REL);
	if (!was_enabled && cp_rt.failure)
		cp_rt.enabled = 0;
	if (!crashed_sig)
		notes_at_exit();
	cp_thread_finish_all();
	if (!was_enabled && cp_rt.failure)
		__atomic_or_fetch(&cp_rt.phdr->h.flags, CP_MF_DISABLED, __ATOMIC_RELEASE);
	cp_proc_finish(crashed_sig);
}

void cp_rt_after_fork_child(void)
{
	if (!cp_rt.active)
		return;
	/* The inherited mappings are the parent's files: forget them unwritten. */
	cp_thread_forget_all_but_self();
	cp_arena_abandon(&cp_rt.proc);
	cp_rt.phdr = NULL;
	cp_rt.finished = 0;
	cp_rt.note_pending = 0;
	cp_rt.exit_status_known = 0;
	int was_enabled = cp_rt.enabled;
	if (image_start(1)) {
		cp_rt.active = 0;
		return;
	}
	cp_rt.enabled = was_enabled;
	for (uint32_t i = 0; i < cp_rt.nmetrics; i++)
		cp_rt.phdr->metrics[i].mechanism = cp_rt.metrics[i].mechanism;
	cp_thread_begin(0);
}

void cp_rt_before_exec(void)
{
	if (!cp_rt.active)
		return;
	cp_rt_note("exec: this image is being replaced%s",
		   cp_rt.follow_exec ? " (the new image is profiled in its own file)" : "");
	cp_rt_fini(0);
}

void cp_rt_exec_failed(void)
{
	if (!cp_rt.active || !cp_rt.phdr)
		return;
	/* Resume: the image goes on. Headers stay marked finished up to here; new samples
	 * still land in the same files. */
	__atomic_and_fetch(&cp_rt.phdr->h.flags, ~(uint32_t)CP_MF_FINISHED, __ATOMIC_RELEASE);
	cp_rt.finished = 0;
	cp_rt.enabled = 1;
	cp_rt_note("exec failed: profiling resumed");
	struct cp_thread *self = cp_self;
	if (self) {
		self->stopped = 0;
		__atomic_and_fetch(&self->cct.hdr->h.flags, ~(uint32_t)CP_MF_FINISHED,
				   __ATOMIC_RELEASE);
		for (uint32_t i = 0; i < cp_rt.nmetrics; i++)
			if (!cp_rt.metrics[i].disabled)
				cp_rt.metrics[i].src->thread_start(&cp_rt.metrics[i], &self->src[i]);
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
