/* Configuration from the environment (set by `callpath record`, inherited across fork and
 * exec):
 *   CALLPATH_OUTPUT=DIR          measurement directory (created if missing)
 *   CALLPATH_EVENTS=SPEC[,SPEC]  NAME[@PERIOD] (events/events.h); default "cputime"; the
 *                                trigger families alloc, io, wait (no period) add their
 *                                metrics (core/sync.c)
 *   CALLPATH_FOLLOW_EXEC=0|1     keep profiling images started by exec (default 1)
 *   CALLPATH_PERF_SPLIT=1        perf events in separate groups (set by `record` when they
 *                                do not fit in one; the kernel multiplexes them)
 *   CALLPATH_SIGNAL=N            the sampling signal (default SIGRTMIN+6)
 *   CALLPATH_NO_PERF=1           do not use perf_event (take the POSIX-timer fallback)
 *   CALLPATH_PACK=0              keep every thread's file (no packing into the process file)
 *   CALLPATH_PROBES=PAT[;PAT]    entry/exit probes (probe/probe.h)
 *   CALLPATH_PROBE_ONLY=1        with probes: no sampling metrics
 *   CALLPATH_SHOW_RUNTIME=1      keep the runtime's own frames in paths (runtime.h)
 *   CALLPATH_MPI=1               the mpi-* metrics of libcallpath-mpi.so's wrappers
 *                                (core/mpi.h; set by record when it preloads that library)
 *   CALLPATH_CONTROL=1           the control channel (core/control.c); the probe runtime
 *                                is then on, with or without CALLPATH_PROBES
 * Without CALLPATH_OUTPUT the runtime stays inactive (preloaded but measuring nothing). */
#include "events/events.h"
#include "runtime/core/runtime.h"
#include "runtime/core/sync.h"
#include "runtime/probe/probe.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Timers (cputime, realtime): a period below the event's minimum is raised to it. */
static int config_add_timer(const char *name, size_t nlen, const struct cp_ev *ev, int rc)
{
	const struct cp_sample_source *src = cp_sample_source_find(name, (unsigned)nlen);
	if (!src || cp_rt.nmetrics >= CP_MF_MAX_METRICS || (rc && rc != CP_EV_LOW_PERIOD))
		return -1;
	struct cp_metric *m = &cp_rt.metrics[cp_rt.nmetrics];
	m->src = src;
	m->index = cp_rt.nmetrics;
	m->period = rc == CP_EV_LOW_PERIOD ? ev->min_period : ev->period;
	cp_rt.nmetrics++;
	return 0;
}

static int config_add_event(const char *spec, size_t len)
{
	char name[64];
	const char *at = memchr(spec, '@', len);
	size_t nlen = at ? (size_t)(at - spec) : len;
	if (nlen >= sizeof name)
		return -1;
	memcpy(name, spec, nlen);
	name[nlen] = 0;
	int family = cp_sync_config_family(name, nlen, at != NULL); /* alloc, io, wait */
	if (family)
		return family < 0 ? -1 : 0;
	struct cp_ev ev; /* the one catalog and period syntax (events/events.h) */
	int rc = cp_ev_parse(spec, len, &ev, NULL, 0);
	if (ev.kind == CP_EV_TIMER)
		return config_add_timer(name, nlen, &ev, rc);
	if (cp_rt.nmetrics < CP_MF_MAX_METRICS) { /* perf events (sample/perf-event-init.c) */
		struct cp_metric *m = &cp_rt.metrics[cp_rt.nmetrics];
		m->index = cp_rt.nmetrics;
		const char *split = cp_rt_getenv("CALLPATH_PERF_SPLIT");
		rc = cp_perf_config(spec, len, m, split && !strcmp(split, "1"));
		if (rc > 0)
			cp_rt.nmetrics++;
		if (rc)
			return rc < 0 ? -1 : 0;
	}
	return -1;
}

static int config_events(const char *events)
{
	const char *p = events && *events ? events : "cputime";
	while (*p) {
		size_t len = strcspn(p, ",");
		if (len && config_add_event(p, len)) {
			fprintf(stderr,
				"callpath runtime: bad event '%.*s' in CALLPATH_EVENTS; "
				"profiling disabled\n",
				(int)len, p);
			return -1;
		}
		p += len + (p[len] == ',');
	}
	return cp_rt.nmetrics ? 0 : -1;
}

static int config_outdir(const char *dir)
{
	if (strlen(dir) >= sizeof cp_rt.outdir - 64)
		return -1;
	strcpy(cp_rt.outdir, dir);
	if (mkdir(dir, 0755) && errno != EEXIST) {
		fprintf(stderr, "callpath runtime: cannot create %s: %s; profiling disabled\n", dir,
			strerror(errno));
		return -1;
	}
	return 0;
}

#define CP_SAVED_ENV_MAX 16
char *cp_saved_env[CP_SAVED_ENV_MAX + 1];
static char saved_env_pool[16384];

static void config_save_env(void)
{
	extern char **environ;
	size_t used = 0, n = 0;
	for (size_t i = 0; environ && environ[i] && n < CP_SAVED_ENV_MAX; i++) {
		const char *kv = environ[i];
		if (strncmp(kv, "CALLPATH_", 9) && strncmp(kv, "LD_PRELOAD=", 11))
			continue;
		size_t len = strlen(kv) + 1;
		if (used + len > sizeof saved_env_pool)
			break;
		memcpy(saved_env_pool + used, kv, len);
		cp_saved_env[n++] = saved_env_pool + used;
		used += len;
	}
	cp_saved_env[n] = NULL;
}

int cp_config_load(int rearm)
{
	if (rearm) { /* a dormant attached runtime: the new settings replace the old */
		memset(cp_rt.metrics, 0, sizeof cp_rt.metrics);
		cp_rt.nmetrics = 0;
	}
	const char *out = cp_rt_getenv("CALLPATH_OUTPUT");
	if (!out || !*out)
		return -1;
	if (config_outdir(out))
		return -1;
	/* With probes (CALLPATH_PROBES, probe/probe.h), CALLPATH_PROBE_ONLY=1 turns sampling
	 * off (`callpath probe` without -e). */
	const char *probes = cp_rt_getenv("CALLPATH_PROBES"), *only = getenv("CALLPATH_PROBE_ONLY");
	const char *control = cp_rt_getenv("CALLPATH_CONTROL");
	int probing = probes && *probes, controlled = control && !strcmp(control, "1");
	if (!(probing && only && !strcmp(only, "1")) &&
	    config_events(cp_rt_getenv("CALLPATH_EVENTS")))
		return -1;
	if ((probing || controlled) && cp_probe_config(probing ? probes : ""))
		return -1;
	const char *mpi = cp_rt_getenv("CALLPATH_MPI");
	if (mpi && !strcmp(mpi, "1") && cp_sync_config_family("mpi", 3, 0) < 0)
		fprintf(stderr, "callpath runtime: too many metrics for the MPI ones; MPI calls "
				"are not measured\n");
	config_save_env();
	const char *follow = cp_rt_getenv("CALLPATH_FOLLOW_EXEC");
	cp_rt.follow_exec = !follow || strcmp(follow, "0") != 0;
	const char *no_perf = cp_rt_getenv("CALLPATH_NO_PERF");
	cp_rt.no_perf = no_perf && !strcmp(no_perf, "1");
	const char *show = cp_rt_getenv("CALLPATH_SHOW_RUNTIME");
	cp_rt.show_runtime = show && !strcmp(show, "1");
	const char *pack = cp_rt_getenv("CALLPATH_PACK");
	cp_rt.no_pack = pack && !strcmp(pack, "0");
	const char *sig = cp_rt_getenv("CALLPATH_SIGNAL");
	cp_rt.signo = SIGRTMIN + CP_DEFAULT_SIGNAL_OFFSET;
	if (sig && *sig) {
		int n = atoi(sig);
		if (n > 0 && n < NSIG && n != SIGKILL && n != SIGSTOP)
			cp_rt.signo = n;
	}
	return 0;
}
