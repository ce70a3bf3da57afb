/* libcallpath-rt.a (docs/cmd-record.md, "Static programs with the runtime linked in"): the
 * runtime linked into a static program, which nothing can be preloaded into and whose libc
 * functions cannot be interposed (there is no RTLD_NEXT). What interpose/real.c and
 * interpose/process.c give the shared runtime is replaced here: no real-function table to
 * resolve (no wrapper calls one), and fork hooks registered with pthread_atfork directly.
 * Threads are found by the runtime's thread scan (core/adopt.c) instead of a
 * pthread_create wrapper; exec is not followed. */
#include "runtime/core/runtime.h"
#include "runtime/probe/probe.h"

#include <pthread.h>
#include <signal.h>

void cp_signal_set_real_sigaction(int (*fn)(int, const struct sigaction *,
					    struct sigaction *)) CP_HIDDEN;

/* Nothing is wrapped: the signal code installs its handlers with libc's sigaction. */
void cp_real_init(void)
{
	cp_signal_set_real_sigaction(sigaction);
}

static void fork_prepare(void)
{
	cp_probe_fork_prepare();
}

static void fork_parent(void)
{
	cp_probe_fork_parent();
}

static void fork_child(void)
{
	cp_probe_fork_child();
	cp_rt_after_fork_child();
}

void cp_fork_hooks_install(void)
{
	pthread_atfork(fork_prepare, fork_parent, fork_child);
}
