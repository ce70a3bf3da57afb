/* attach --inject (docs/internals/inject.md): loads the runtime into a running process and
 * starts it. Every thread is stopped (ptrace.c); a thread at a safe point (inject-safe.c)
 * is chosen, the others are released (so that a lock one of them holds is released too
 * while the chosen thread runs the loader), and the chosen thread calls libc's dlopen for
 * the runtime, then the runtime's callpath_attach_start(SETTINGS) (core/attach.c), with
 * its registers restored afterwards. No thread at a safe point: everything is released for
 * a moment and the stop is tried again. */
#include "kcopy/inject-internal.h"
#include "kcopy/kcopy.h"

#include "base/error.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define KC_INJECT_TRIES 2000
#define KC_CALL_TIMEOUT_S 30.0

static struct kc_stopped stopped; /* large: static (one injection per callpath process) */

static int read_int_file(const char *path, int *out)
{
	FILE *f = fopen(path, "r");
	int ok = f && fscanf(f, "%d", out) == 1;
	if (f)
		fclose(f);
	return ok ? 0 : -1;
}

/* The tracer of pid (TracerPid in its status), 0 if none. */
static int tracer_of(pid_t pid)
{
	char path[64], line[256];
	int tracer = 0;
	snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
	FILE *f = fopen(path, "r");
	while (f && fgets(line, sizeof line, f))
		if (sscanf(line, "TracerPid: %d", &tracer) == 1)
			break;
	if (f)
		fclose(f);
	return tracer;
}

int kc_ptrace_refusal(pid_t pid, int err)
{
	int scope = 0, tracer = tracer_of(pid);
	if (err == ESRCH)
		return cp_error(CP_ENOENT, "process %d has ended", (int)pid);
	if (tracer)
		return cp_error(CP_EPERM,
				"process %d is already traced by process %d (a debugger?)",
				(int)pid, tracer);
	if (!read_int_file("/proc/sys/kernel/yama/ptrace_scope", &scope) && scope > 0)
		return cp_error(CP_EPERM,
				"not permitted to trace process %d: ptrace_scope is %d (Yama); "
				"as root: sysctl kernel.yama.ptrace_scope=0, or give callpath "
				"CAP_SYS_PTRACE%s",
				(int)pid, scope,
				scope == 3 ? " (3: no attaching at all until reboot)" : "");
	return cp_error(CP_EPERM, "not permitted to trace process %d: %s", (int)pid, strerror(err));
}

/* The settings the runtime reads instead of its environment (core/attach.c). */
static int write_settings(const struct cp_inject_opts *o, char *path, size_t cap)
{
	snprintf(path, cap, "%s/.attach-settings", o->outdir);
	FILE *f = fopen(path, "w");
	if (!f)
		return cp_error(CP_EIO, "cannot write %s: %s", path, strerror(errno));
	fprintf(f, "CALLPATH_OUTPUT=%s\nCALLPATH_EVENTS=%s\nCALLPATH_CONTROL=1\n", o->outdir,
		o->events && *o->events ? o->events : "cputime");
	return fclose(f) ? cp_error(CP_EIO, "cannot write %s", path) : 0;
}

/* Stops every thread and returns the index of one at a safe point (the main thread
 * preferred), the others still stopped; -1 (all released) if there is none now. */
static int stop_at_safe_point(pid_t pid, struct kc_safety *k, int *rc)
{
	*rc = kc_stop_all(pid, &stopped);
	if (*rc)
		return -1;
	int pick = -1;
	for (size_t i = 0; i < stopped.n && pick < 0; i++)
		if (stopped.t[i].tid == pid && kc_thread_safe(k, pid) == 1)
			pick = (int)i;
	for (size_t i = 0; i < stopped.n && pick < 0; i++)
		if (kc_thread_safe(k, stopped.t[i].tid) == 1)
			pick = (int)i;
	if (pick < 0)
		kc_release_all(&stopped);
	return pick;
}

/* In the stopped thread: dlopen(runtime), then callpath_attach_start(settings). */
static int load_and_start(pid_t pid, pid_t tid, const struct cp_inject_opts *o,
			  const char *settings, int *started)
{
	uintptr_t dlopen_at = kc_symbol_in(pid, "/libc.so.6", "dlopen");
	if (!dlopen_at)
		dlopen_at = kc_symbol_in(pid, "/libc.so.6", "__libc_dlopen_mode");
	if (!dlopen_at)
		return cp_error(CP_ENOTSUP, "process %d: no dlopen in its libc (a static program?)",
				(int)pid);
	uint64_t args[2] = {KC_DATA, RTLD_NOW}, ret = 0;
	int rc = kc_remote_call(tid, dlopen_at, args, 2, o->runtime, strlen(o->runtime) + 1, &ret,
				KC_CALL_TIMEOUT_S);
	if (rc)
		return rc;
	if (!ret)
		return cp_error(CP_EIO, "process %d: dlopen of %s failed inside the process",
				(int)pid, o->runtime);
	const char *base = strrchr(o->runtime, '/');
	uintptr_t start = kc_symbol_in(pid, base ? base : o->runtime, "callpath_attach_start");
	if (!start)
		return cp_error(CP_EIO, "process %d: the runtime has no callpath_attach_start",
				(int)pid);
	args[0] = KC_DATA;
	rc = kc_remote_call(tid, start, args, 1, settings, strlen(settings) + 1, &ret,
			    KC_CALL_TIMEOUT_S);
	if (rc)
		return rc;
	*started = (int)ret;
	if ((int)ret == 1)
		return cp_error(CP_EINVAL, "process %d is measured by callpath already", (int)pid);
	if ((int)ret < 0)
		return cp_error(CP_EIO, "process %d: the runtime did not start (see %s)", (int)pid,
				o->outdir);
	return 0;
}

static void pause_ms(long ms)
{
	struct timespec ts = {0, ms * 1000000};
	nanosleep(&ts, NULL);
}

int cp_kcopy_inject(pid_t pid, const struct cp_inject_opts *o, struct cp_inject_result *res)
{
	char settings[PATH_MAX + 32];
	memset(res, 0, sizeof *res);
	int tracer = tracer_of(pid);
	if (tracer)
		return cp_error(CP_EPERM,
				"process %d is already traced by process %d (a debugger?)",
				(int)pid, tracer);
	int rc = write_settings(o, settings, sizeof settings);
	struct kc_safety *k = rc ? NULL : kc_safety_open(pid);
	if (!rc && !k)
		rc = cp_error(CP_ENOENT, "process %d: cannot read its modules", (int)pid);
	const char *base = strrchr(o->runtime, '/');
	if (k) /* loaded by an earlier injection: it is re-armed */
		res->was_loaded =
		    kc_symbol_in(pid, base ? base : o->runtime, "callpath_attach_start") != 0;
	int pick = -1;
	for (int i = 0; !rc && pick < 0 && i < KC_INJECT_TRIES; i++) {
		res->tries++;
		pick = stop_at_safe_point(pid, k, &rc);
		if (pick < 0 && !rc)
			pause_ms(1 + i % 5);
	}
	if (!rc && pick < 0)
		rc = cp_error(CP_EIO, "process %d: no thread at a safe point in %d tries", (int)pid,
			      KC_INJECT_TRIES);
	if (!rc) {
		/* Ctrl-C, SIGTERM (timeout(1)) or a hangup while a call runs in the thread would
		 * end this tracer and detach the thread mid-call: its return address is 0, and
		 * the program would die of it. They wait until the thread is released. */
		sigset_t block, saved;
		sigemptyset(&block);
		sigaddset(&block, SIGINT);
		sigaddset(&block, SIGTERM);
		sigaddset(&block, SIGHUP);
		sigaddset(&block, SIGQUIT);
		sigprocmask(SIG_BLOCK, &block, &saved);
		res->threads = stopped.n;
		for (size_t i = 0; i < stopped.n; i++)
			if ((int)i != pick)
				kc_release(&stopped.t[i]);
		int started = 0;
		rc = load_and_start(pid, stopped.t[pick].tid, o, settings, &started);
		kc_release(&stopped.t[pick]);
		stopped.n = 0;
		sigprocmask(SIG_SETMASK, &saved, NULL);
	}
	kc_safety_close(k);
	return rc;
}
