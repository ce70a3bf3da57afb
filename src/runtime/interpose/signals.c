/* The program and our sampling signal.
 *
 * sigaction/signal for our signal: the program's handler is stored (and reported back as
 * installed), ours stays; the sample handler chains to it for deliveries that are not
 * samples. sigprocmask/pthread_sigmask: our signal is never actually blocked, but a program
 * that blocked it sees it as blocked when it asks. */
#include "runtime/core/runtime.h"
#include "runtime/interpose/real.h"

#include <errno.h>
#include <string.h>

static int is_ours(int sig)
{
	return cp_rt.active && sig == cp_rt.signo;
}

CP_EXPORT int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	typeof(cp_real.sigaction) real = CP_REAL(sigaction);
	if (cp_livepatch_sigaction(sig, act, old))
		return 0; /* SIGTRAP: ours stays, the program's is chained (core/livepatch.c) */
	if (!is_ours(sig)) {
		int rc = real(sig, act, old);
		/* Our exit-time handler for a fatal signal looks like SIG_DFL to the program. */
		if (!rc && old && cp_signal_is_fatal_handler(old)) {
			memset(old, 0, sizeof *old);
			old->sa_handler = SIG_DFL;
		}
		return rc;
	}
	struct cp_thread *t = cp_self;
	if (t)
		t->busy++;
	struct sigaction prev = cp_app_action;
	if (!cp_app_action_set) {
		memset(&prev, 0, sizeof prev);
		prev.sa_handler = SIG_DFL;
	}
	if (act) {
		cp_app_action_set = 0;
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		cp_app_action = *act;
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		cp_app_action_set = 1;
	}
	if (old)
		*old = prev;
	if (t)
		t->busy--;
	return 0;
}

static sighandler_t signal_common(int sig, sighandler_t handler, int flags)
{
	struct sigaction sa, old;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = handler;
	sa.sa_flags = flags;
	sigemptyset(&sa.sa_mask);
	if (sigaction(sig, &sa, &old))
		return SIG_ERR;
	return old.sa_handler;
}

CP_EXPORT sighandler_t signal(int sig, sighandler_t handler)
{
	if (!is_ours(sig) && sig != SIGTRAP) {
		sighandler_t prev = CP_REAL(signal)(sig, handler);
		struct sigaction probe;
		memset(&probe, 0, sizeof probe);
		probe.sa_handler = prev;
		probe.sa_flags = SA_SIGINFO;
		return cp_signal_is_fatal_handler(&probe) ? SIG_DFL : prev;
	}
	return signal_common(sig, handler, SA_RESTART); /* glibc's signal(): BSD semantics */
}

CP_EXPORT sighandler_t sysv_signal(int sig, sighandler_t handler)
{
	if (!is_ours(sig) && sig != SIGTRAP)
		return CP_REAL(sysv_signal)(sig, handler);
	return signal_common(sig, handler, SA_RESETHAND | SA_NODEFER);
}

/* Removes our signal from what the program blocks, remembering its wish per thread. */
static int mask_filtered(int (*real)(int, const sigset_t *, sigset_t *), int how,
			 const sigset_t *set, sigset_t *old)
{
	if (!cp_rt.active)
		return real(how, set, old);
	struct cp_thread *t = cp_self;
	int wanted = t ? t->app_blocked : 0;
	sigset_t copy;
	const sigset_t *use = set;
	if (set) {
		copy = *set;
		int mentions = sigismember(&copy, cp_rt.signo) == 1;
		if (how == SIG_SETMASK)
			wanted = mentions;
		else if (how == SIG_BLOCK && mentions)
			wanted = 1;
		else if (how == SIG_UNBLOCK && mentions)
			wanted = 0;
		if (how != SIG_UNBLOCK)
			sigdelset(&copy, cp_rt.signo);
		use = &copy;
	}
	int prev = t ? t->app_blocked : 0;
	int rc = real(how, use, old);
	if (rc == 0) {
		if (old && prev)
			sigaddset(old, cp_rt.signo);
		if (t)
			t->app_blocked = wanted;
	}
	return rc;
}

CP_EXPORT int sigprocmask(int how, const sigset_t *set, sigset_t *old)
{
	return mask_filtered(CP_REAL(sigprocmask), how, set, old);
}

CP_EXPORT int pthread_sigmask(int how, const sigset_t *set, sigset_t *old)
{
	return mask_filtered(CP_REAL(pthread_sigmask), how, set, old);
}
