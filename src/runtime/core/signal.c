/* The sampling signal handler and the fatal-signal handler.
 *
 * Async-signal-safe throughout: no malloc, stdio, locks or dlsym (banned.h poisons them).
 * A sample that lands while the runtime itself is running on this thread (t->busy) is
 * dropped and counted, so nothing here can deadlock on a lock the interrupted code holds;
 * the unwinder and the module lookup are lock-free. */
#include "runtime/core/runtime.h"
#include "runtime/core/fds.h"
#include "runtime/omp/omp.h"
#include "runtime/unwind/modules.h"
#include "runtime/unwind/unwind.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "base/sigsafe/sigsafe.h"
#include "base/sigsafe/banned.h"

struct sigaction cp_app_action;
volatile int cp_app_action_set;
static int (*real_sigaction_fn)(int, const struct sigaction *, struct sigaction *);

static uint16_t frame_node_kind(const struct cp_frame *f)
{
	switch (f->kind) {
	case CP_FRAME_PC:
		return CP_MF_NODE_PC;
	case CP_FRAME_SIGNAL:
		return CP_MF_NODE_SIGNAL;
	case CP_FRAME_REGION:
		return CP_MF_NODE_REGION;
	case CP_FRAME_TASK:
		return CP_MF_NODE_TASK;
	case CP_FRAME_IDLE:
		return CP_MF_NODE_IDLE;
	default:
		return CP_MF_NODE_CALL;
	}
}

/* (module id, offset) node of one frame under parent. */
static uint32_t frame_node(struct cp_thread *t, uint32_t parent, const struct cp_frame *f)
{
	uintptr_t pc = f->pc;
	/* A return address may be one past the end of its function: look it up at pc - 1. */
	const struct cp_module *m = cp_modules_find(f->kind == CP_FRAME_RETURN ? pc - 1 : pc);
	uint32_t id = m ? m->id : CP_MF_MODULE_NONE;
	uint64_t off = m ? pc - m->bias : pc;
	return cp_cct_child(&t->cct, parent, frame_node_kind(f), id, off);
}

/* Inserts the path root -> [PARTIAL] -> outermost ... leaf, returns the leaf node, leaving
 * out the runtime's frames (cp_rt_hides_frame: a sample whose pc is in a wrapper lands on
 * the program's call to it). The
 * prefix shared with the previous path comes from the path cache pc (the thread's
 * sampling one, or its synchronous-trigger one: core/sync.c). AS-safe. */
uint32_t cp_path_insert(struct cp_thread *t, struct cp_path_cache *pc,
			const struct cp_frame *frames, int n, enum cp_unwind_status status)
{
	uint32_t node = 0;
	if (status != CP_UNWIND_COMPLETE)
		node = cp_cct_child(&t->cct, 0, CP_MF_NODE_PARTIAL, CP_MF_MODULE_NONE, 0);
	uint32_t j = 0, reuse = 0;
	if (pc->root == node && pc->modules_gen == cp_rt.modules_gen)
		reuse = pc->n;
	pc->root = node;
	pc->modules_gen = cp_rt.modules_gen;
	for (int i = n - 1; i >= 0 && node != CP_CCT_NONE; i--, j++) {
		const struct cp_frame *f = &frames[i];
		if (j < reuse && pc->pc[j] == f->pc && pc->kind[j] == f->kind) {
			node = pc->node[j];
			continue;
		}
		reuse = 0;
		if (!cp_rt_hides_frame(f->pc, f->kind == CP_FRAME_RETURN))
			node = frame_node(t, node, f);
		pc->pc[j] = f->pc;
		pc->kind[j] = (uint8_t)f->kind;
		pc->node[j] = node;
	}
	pc->n = node == CP_CCT_NONE ? 0 : j;
	return node;
}

static void sample_take(struct cp_thread *t, uint32_t metric, uint64_t weight, const ucontext_t *uc)
{
	struct cp_frame *frames = t->frames;
	enum cp_unwind_status status = CP_UNWIND_FAILED;
	struct cp_mf_thread *h = t->cct.hdr;
	int n = cp_unwind_context(uc, frames, CP_MAX_FRAMES, &status);
	if (n <= 0) {
		h->unwind_failed++;
		h->dropped++;
		return;
	}
	/* An OpenMP thread's path continues in its region's context; the counts below stay
	 * the unwinder's own (did it reach the thread's outermost frame). */
	enum cp_unwind_status path_status = status;
	n = cp_omp_splice(t, frames, n, CP_MAX_FRAMES, &path_status);
	uint32_t leaf = cp_path_insert(t, &t->path, frames, n, path_status);
	if (leaf == CP_CCT_NONE) {
		h->dropped++;
		cp_rt_fail("a thread's calling-context tree could not grow (disk full?)");
		return;
	}
	cp_cct_add_sample(&t->cct, leaf, metric, weight, n, (int)status);
}

/* Which of our metrics sent this signal on this thread; -1 if none. */
static int sample_claim(struct cp_thread *t, const siginfo_t *si, uint64_t *weight)
{
	for (uint32_t i = 0; i < cp_rt.nmetrics; i++) {
		struct cp_metric *m = &cp_rt.metrics[i];
		if (m->src->claims(m, &t->src[i], si, weight))
			return (int)i;
	}
	return -1;
}

/* A delivery that looks like one of ours although no live source claims it (a signal
 * queued before a source stopped, or a timer of a thread we already finished). */
static int looks_like_ours(const siginfo_t *si)
{
	if (si->si_code == SI_TIMER)
		return (si->si_value.sival_int & CP_TIMER_MAGIC_MASK) == CP_TIMER_MAGIC;
	return si->si_code == POLL_IN || si->si_code == POLL_HUP;
}

int cp_signal_chain(const struct sigaction *a, int sig, siginfo_t *si, void *ucv)
{
	if (a->sa_flags & SA_SIGINFO) {
		if (!a->sa_sigaction)
			return 0;
		a->sa_sigaction(sig, si, ucv);
		return 1;
	}
	if (a->sa_handler == SIG_DFL || a->sa_handler == SIG_IGN)
		return 0;
	a->sa_handler(sig);
	return 1;
}

static void chain_to_program(int sig, siginfo_t *si, void *ucv)
{
	/* SIG_DFL of a real-time signal would terminate; we never let a stray one do that. */
	if (cp_app_action_set)
		cp_signal_chain(&cp_app_action, sig, si, ucv);
}

/* This thread's state. With adopted threads about, cp_self may be another thread's: a
 * thread made by clone without CLONE_SETTLS shares its creator's TLS. */
static struct cp_thread *handler_thread(void)
{
	struct cp_thread *t = cp_self;
	if (!__atomic_load_n(&cp_rt.nadopted, __ATOMIC_ACQUIRE))
		return t;
	pid_t tid = cp_ss_gettid();
	if (t && t->tid == tid && !t->stopped)
		return t;
	/* cp_self may also be this thread's state of an earlier attach (re-armed since,
	 * core/attach.c), stopped, until the new state's CP_TLS_MAGIC arrives: its sources
	 * are closed, it would claim nothing. */
	struct cp_thread *a = cp_thread_find_adopted(tid);
	return a ? a : t && t->tid == tid ? t : NULL;
}

/* A perf event's overflow that is ours (the runtime owns the descriptor) while this
 * thread's live state claims nothing: an event no state holds any more (two states for
 * one thread, or one left behind). It is disabled: left alone it would go on signalling,
 * and one whose short first period (sample/cputime.c) was never restored by a claim
 * signals every 10 us of the thread's CPU time, for good (a thread that only runs this
 * handler: attach --inject hung so). AS-safe. */
static void orphan_event(const struct cp_thread *t, const siginfo_t *si)
{
	if (!t || t->stopped || (si->si_code != POLL_IN && si->si_code != POLL_HUP) ||
	    si->si_fd < 0 || !cp_fd_is_owned(si->si_fd))
		return;
	for (uint32_t i = 0; i < cp_rt.nmetrics; i++)
		if (t->src[i].fd == si->si_fd)
			return; /* its own, not claimed for another reason */
	/* Still routed to this thread: not a stale signal whose descriptor number another
	 * thread's new event has taken since. */
	struct f_owner_ex o;
	if (fcntl(si->si_fd, F_GETOWN_EX, &o) || o.type != F_OWNER_TID || o.pid != t->tid)
		return;
	if (!ioctl(si->si_fd, PERF_EVENT_IOC_DISABLE, 0))
		__atomic_add_fetch(&cp_rt.orphan_events, 1, __ATOMIC_RELAXED);
}

static void sample_handler(int sig, siginfo_t *si, void *ucv)
{
	int saved_errno = errno;
	struct cp_thread *t = handler_thread();
	if (si->si_code == SI_QUEUE && si->si_value.sival_int == CP_TLS_MAGIC &&
	    si->si_pid == cp_rt.pid) { /* adopted by an attached runtime (core/thread.c) */
		struct cp_thread *a = cp_thread_find_adopted(cp_ss_gettid());
		if (a)
			cp_self = a;
		errno = saved_errno;
		return;
	}
	if (cp_livepatch_answer(si, ucv)) {
		if (t) /* ours: a sleep it interrupted is resumed (interpose/sleep.c) */
			t->our_signals++;
		errno = saved_errno;
		return;
	}
	if (si->si_code == SI_TIMER && si->si_value.sival_int == CP_SCAN_MAGIC) {
		if (t) /* ours: a sleep it interrupted is resumed (interpose/sleep.c) */
			t->our_signals++;
		cp_adopt_scan(0);
		errno = saved_errno;
		return;
	}
	uint64_t weight = 0;
	int metric = -1;
	if (t)
		metric = sample_claim(t, si, &weight);
	if (metric < 0) {
		if (!looks_like_ours(si)) {
			if (t)
				t->foreign_signals++;
			chain_to_program(sig, si, ucv);
		} else if (!t) {
			__atomic_add_fetch(&cp_rt.dropped_nothread, 1, __ATOMIC_RELAXED);
		} else {
			orphan_event(t, si);
		}
		errno = saved_errno;
		return;
	}
	t->our_signals++;
	if (t->busy || t->stopped || !cp_rt.enabled) {
		t->cct.hdr->dropped++;
	} else {
		t->busy = 1;
		sample_take(t, (uint32_t)metric, weight, ucv);
		/* Nobody reads an adopted thread's CPU clock at its end (no key destructor, and
		 * at exit it may be gone): its header keeps the time up to its last sample. */
		if (t->adopted)
			t->cct.hdr->cpu_ns =
			    cp_ss_now_ns(CLOCK_THREAD_CPUTIME_ID) - t->cpu_start_ns;
		t->busy = 0;
	}
	errno = saved_errno;
}

int cp_signal_handler_install(int sig, void (*fn)(int, siginfo_t *, void *), int flags,
			      const sigset_t *mask, struct sigaction *old)
{
	struct sigaction sa;
	__builtin_memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = fn;
	sa.sa_flags = SA_SIGINFO | flags;
	if (mask)
		sa.sa_mask = *mask;
	else
		sigemptyset(&sa.sa_mask);
	return real_sigaction_fn(sig, &sa, old);
}

int cp_signal_install(void)
{
	/* Nothing of the program's may run inside a sample: a program handler that
	 * siglongjmps would leave it half taken (t->busy stuck, every later sample of the
	 * thread dropped; record-sigjump). Other signals wait the few microseconds a sample
	 * takes. Synchronous faults stay deliverable, so a fault is never held pending. */
	sigset_t mask;
	sigfillset(&mask);
	sigdelset(&mask, SIGSEGV);
	sigdelset(&mask, SIGBUS);
	sigdelset(&mask, SIGILL);
	sigdelset(&mask, SIGFPE);
	sigdelset(&mask, SIGTRAP);
	return cp_signal_handler_install(cp_rt.signo, sample_handler, SA_RESTART, &mask, NULL);
}

int cp_signal_real_sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	return real_sigaction_fn(sig, act, old);
}

void cp_signal_set_real_sigaction(int (*fn)(int, const struct sigaction *, struct sigaction *))
{
	real_sigaction_fn = fn;
}

/* Signals whose default action ends the process: the files are marked CRASHED and
 * finished, then the signal takes its default action, so the exit status the parent sees
 * is unchanged. Installed only where the disposition is SIG_DFL at start; a program that
 * installs its own handler replaces ours (and sigaction reports SIG_DFL for ours). */
static const int fatal_signals[] = {SIGSEGV, SIGBUS,  SIGILL, SIGFPE,  SIGABRT, SIGTRAP, SIGSYS,
				    SIGINT,  SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGXCPU, SIGXFSZ};

void cp_signal_default_action(int sig)
{
	struct sigaction dfl;
	__builtin_memset(&dfl, 0, sizeof dfl);
	dfl.sa_handler = SIG_DFL;
	real_sigaction_fn(sig, &dfl, NULL);
	/* Raise it again with the default action: delivered now, or when we return if it is
	 * blocked in the handler (a fault would also re-execute and fault again). */
	syscall(SYS_tgkill, cp_ss_getpid(), cp_ss_gettid(), sig);
}

static void fatal_handler(int sig, siginfo_t *si, void *ucv)
{
	/* In a vfork child this thread's state is the parent's: leave it alone (cp_rt_fini
	 * does nothing there either). */
	if (cp_self && !cp_rt_foreign_child())
		cp_self->busy = 1;
	cp_rt_fini(sig);
	cp_signal_default_action(sig);
}

int cp_signal_is_fatal_handler(const struct sigaction *sa)
{
	return (sa->sa_flags & SA_SIGINFO) && sa->sa_sigaction == fatal_handler;
}

void cp_signal_fatal_install(void)
{
	struct sigaction old;
	for (unsigned i = 0; i < sizeof fatal_signals / sizeof fatal_signals[0]; i++) {
		if (real_sigaction_fn(fatal_signals[i], NULL, &old) == 0 &&
		    old.sa_handler == SIG_DFL)
			cp_signal_handler_install(fatal_signals[i], fatal_handler, SA_RESETHAND,
						  NULL, NULL);
	}
}
