/* The CLI's side of events (events.h, "cp_events_cli only"): libpfm4 names, the trial open
 * on our own process with the errors users hit, and the listing. */
#include "events/events.h"

#include <ctype.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#ifdef CP_HAVE_PFM
#include <perfmon/pfmlib_perf_event.h>
#endif

/* ---- libpfm4 ---- */

#ifdef CP_HAVE_PFM
static int pfm_ready(void)
{
	static int state; /* 0 untried, 1 ok, -1 failed */
	if (!state)
		state = pfm_initialize() == PFM_SUCCESS ? 1 : -1;
	return state > 0;
}

static int pfm_resolve(const char *name, struct cp_ev *ev)
{
	if (!pfm_ready())
		return CP_EV_UNKNOWN;
	struct perf_event_attr attr;
	pfm_perf_encode_arg_t arg;
	memset(&attr, 0, sizeof attr);
	memset(&arg, 0, sizeof arg);
	arg.attr = &attr;
	arg.size = sizeof arg;
	if (pfm_get_os_event_encoding(name, PFM_PLM3, PFM_OS_PERF_EVENT_EXT, &arg) != PFM_SUCCESS)
		return CP_EV_UNKNOWN;
	ev->type = attr.type;
	ev->config = attr.config;
	ev->config1 = attr.config1;
	ev->config2 = attr.config2;
	ev->kind = attr.type == PERF_TYPE_SOFTWARE ? CP_EV_SOFTWARE : CP_EV_PMU;
	ev->time_based =
	    attr.type == PERF_TYPE_SOFTWARE &&
	    (attr.config == PERF_COUNT_SW_CPU_CLOCK || attr.config == PERF_COUNT_SW_TASK_CLOCK);
	ev->min_period = ev->kind == CP_EV_SOFTWARE ? (ev->time_based ? 10000 : 1) : 1000;
	ev->period = ev->time_based ? 1000000 : 100003;
	return CP_EV_OK;
}

/* Whether PMU p is on this machine, with its description in *pi. */
static int pmu_present(pfm_pmu_t p, pfm_pmu_info_t *pi)
{
	memset(pi, 0, sizeof *pi);
	pi->size = sizeof *pi;
	return pfm_get_pmu_info(p, pi) == PFM_SUCCESS && pi->is_present;
}

/* The description of libpfm event idx in *ei; 0 when it has none for perf. */
static int event_info(int idx, pfm_event_info_t *ei)
{
	memset(ei, 0, sizeof *ei);
	ei->size = sizeof *ei;
	return pfm_get_event_info(idx, PFM_OS_PERF_EVENT_EXT, ei) == PFM_SUCCESS;
}
#endif

/* ---- suggestions for unknown names ---- */

static size_t edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), row[128];
	if (la >= 127 || lb >= 127)
		return 99;
	for (size_t j = 0; j <= lb; j++)
		row[j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t diag = row[0];
		row[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t up = row[j];
			size_t sub = diag + (tolower((unsigned char)a[i - 1]) !=
					     tolower((unsigned char)b[j - 1]));
			size_t best = up + 1 < row[j - 1] + 1 ? up + 1 : row[j - 1] + 1;
			row[j] = sub < best ? sub : best;
			diag = up;
		}
	}
	return row[lb];
}

static int contains_ci(const char *hay, const char *needle)
{
	size_t n = strlen(needle);
	for (; *hay; hay++)
		if (!strncasecmp(hay, needle, n))
			return 1;
	return 0;
}

struct suggest {
	char *out;
	size_t cap, len;
	int count;
};

static void suggest_add(struct suggest *s, const char *name)
{
	if (s->count >= 6 || (s->len && strcasestr(s->out, name)))
		return;
	int n = snprintf(s->out + s->len, s->cap - s->len, "%s%s", s->count ? ", " : "", name);
	if (n > 0 && s->len + (size_t)n < s->cap) {
		s->len += (size_t)n;
		s->count++;
	} else {
		s->out[s->len] = 0;
	}
}

static int close_name(const char *typed, const char *name)
{
	size_t d = edit_distance(typed, name);
	size_t lim = strlen(typed) <= 4 ? 1 : 2;
	return d <= lim || (strlen(typed) >= 4 && contains_ci(name, typed));
}

/* Names close to `typed` among extra[], the generic table and libpfm4's events. */
static void suggest_names(const char *typed, const char *const *extra, struct suggest *s)
{
	for (size_t i = 0; extra && extra[i]; i++)
		if (close_name(typed, extra[i]))
			suggest_add(s, extra[i]);
	for (size_t i = 0; i < cp_ev_table_len; i++)
		if (close_name(typed, cp_ev_table[i].name))
			suggest_add(s, cp_ev_table[i].name);
#ifdef CP_HAVE_PFM
	if (!pfm_ready() || strlen(typed) < 4)
		return;
	char base[64];
	snprintf(base, sizeof base, "%s", typed);
	base[strcspn(base, ":")] = 0;
	pfm_pmu_t p;
	pfm_for_all_pmus(p)
	{
		pfm_pmu_info_t pi;
		if (!pmu_present(p, &pi))
			continue;
		for (int idx = pi.first_event; idx != -1; idx = pfm_get_event_next(idx)) {
			pfm_event_info_t ei;
			if (!event_info(idx, &ei))
				continue;
			if (edit_distance(base, ei.name) <= 2 || contains_ci(ei.name, base))
				suggest_add(s, ei.name);
		}
	}
#endif
}

int cp_ev_suggest(const char *typed, const char *const *extra, char *out, size_t cap)
{
	struct suggest s = {out, cap, 0, 0};
	out[0] = 0;
	suggest_names(typed, extra, &s);
	return s.count;
}

int cp_ev_resolve(const char *spec, struct cp_ev *ev, char *err, size_t errcap)
{
	int rc = cp_ev_parse(spec, strlen(spec), ev, err, errcap);
	if (rc != CP_EV_UNKNOWN)
		goto out;
#ifdef CP_HAVE_PFM
	const char *at = strchr(spec, '@');
	char name[sizeof ev->name];
	size_t nlen = at ? (size_t)(at - spec) : strlen(spec);
	if (nlen < sizeof name && !memchr(spec, '#', nlen)) {
		memcpy(name, spec, nlen);
		name[nlen] = 0;
		rc = pfm_resolve(name, ev);
		if (!rc && at)
			rc = cp_ev_parse_period(ev, at + 1, err, errcap);
	}
#endif
out:
	if (rc == CP_EV_BAD_SPEC)
		snprintf(err, errcap, "malformed event '%s'", spec);
	else if (rc == CP_EV_UNKNOWN && !strncmp(spec, "PAPI_", 5)) {
		snprintf(err, errcap,
			 "unknown event '%.*s': callpath does not use PAPI; the PAPI presets it "
			 "knows are aliases of perf events (PAPI_TOT_CYC, PAPI_TOT_INS, "
			 "PAPI_BR_INS, PAPI_BR_MSP, PAPI_L1_DCM, PAPI_L1_ICM, PAPI_L3_TCM, "
			 "PAPI_TLB_DM); for others name this CPU's PMU event (see 'callpath record "
			 "--list-events=PATTERN', e.g. FP_ARITH for floating-point operations)",
			 (int)strcspn(spec, "@"), spec);
		rc = CP_EV_NO_PAPI;
	} else if (rc == CP_EV_UNKNOWN)
		snprintf(err, errcap, "unknown event '%.*s'", (int)strcspn(spec, "@"), spec);
	return rc;
}

/* ---- trial open ---- */

static long ev_open(struct perf_event_attr *attr, int group)
{
	return syscall(SYS_perf_event_open, attr, 0, -1, group, PERF_FLAG_FD_CLOEXEC);
}

/* The integer in the /proc file at path, or fallback when there is none. */
static int proc_int(const char *path, int fallback)
{
	int v = fallback;
	FILE *f = fopen(path, "r");
	if (f) {
		if (fscanf(f, "%d", &v) != 1)
			v = fallback;
		fclose(f);
	}
	return v;
}

static int paranoid_level(void)
{
	return proc_int("/proc/sys/kernel/perf_event_paranoid", 99);
}

static int have_pmu(void)
{
	return !access("/sys/bus/event_source/devices/cpu", F_OK) ||
	       !access("/sys/bus/event_source/devices/cpu_core", F_OK) ||
	       !access("/sys/bus/event_source/devices/armv8_pmuv3_0", F_OK);
}

static int max_sample_rate(void)
{
	return proc_int("/proc/sys/kernel/perf_event_max_sample_rate", 0);
}

/* The user's explanation of errno e when opening ev. */
static int open_error(const struct cp_ev *ev, int e, char *err, size_t cap)
{
	if (e == EACCES || e == EPERM) {
		snprintf(err, cap,
			 "cannot open event '%s': permission denied (%s). The kernel's "
			 "/proc/sys/kernel/perf_event_paranoid is %d; measuring your own programs "
			 "needs 2 or lower (1 to include kernel time): run "
			 "'sudo sysctl kernel.perf_event_paranoid=2' (or run as root / with "
			 "CAP_PERFMON)",
			 ev->name, strerror(e), paranoid_level());
	} else if ((e == ENOENT || e == EOPNOTSUPP || e == ENODEV) && !cp_ev_is_software(ev) &&
		   !have_pmu()) {
		snprintf(err, cap,
			 "cannot open event '%s': this machine exposes no hardware performance "
			 "counters (a VM?); use a software event such as cpu-clock or task-clock",
			 ev->name);
	} else if (e == EOPNOTSUPP) {
		snprintf(
		    err, cap,
		    "cannot sample event '%s': its PMU cannot interrupt on overflow (an uncore "
		    "or power event?); pick a core event (see 'callpath record --list-events')",
		    ev->name);
	} else if (e == ENOENT || e == ENODEV) {
		snprintf(err, cap,
			 "cannot open event '%s': this machine's PMU does not have it (%s); see "
			 "'callpath record --list-events'",
			 ev->name, strerror(e));
	} else if (e == EINVAL && ev->freq && max_sample_rate() > 0 &&
		   ev->period > (uint64_t)max_sample_rate()) {
		snprintf(err, cap,
			 "bad period 'f%llu' for %s: above the kernel's limit of %d samples per "
			 "second (/proc/sys/kernel/perf_event_max_sample_rate)",
			 (unsigned long long)ev->period, ev->name, max_sample_rate());
	} else if (e == EINVAL && !cp_ev_is_software(ev)) {
		snprintf(err, cap,
			 "cannot open event '%s': the kernel rejects it (%s): a code or umask this "
			 "PMU does not take, or a modifier it does not support",
			 ev->name, strerror(e));
	} else if (e == EMFILE || e == ENFILE) {
		snprintf(err, cap, "cannot open event '%s': too many open files (%s)", ev->name,
			 strerror(e));
	} else {
		snprintf(err, cap, "cannot open event '%s': %s", ev->name, strerror(e));
	}
	return -e;
}

static void spin_a_little(void)
{
	struct timespec t0, t;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
	volatile uint64_t x = 1;
	do {
		for (int i = 0; i < 10000; i++)
			x = x * 6364136223846793005ull + 1;
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	} while ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) < 2000000);
}

/* Opens evs[] as one group; 1 if the group was scheduled while enabled, 0 if it never was
 * (more hardware events than counters), -errno if it cannot be opened as a group. */
static int try_group(const struct cp_ev *evs, int n, int exclude_kernel)
{
	int fds[64], nfd = 0, rc = 0;
	for (int i = 0; i < n && nfd < 64; i++) {
		struct perf_event_attr attr;
		cp_ev_attr(&evs[i], exclude_kernel, &attr);
		attr.disabled = nfd == 0;
		long fd = ev_open(&attr, nfd ? fds[0] : -1);
		if (fd < 0) {
			rc = -errno;
			goto out;
		}
		fds[nfd++] = (int)fd;
	}
	ioctl(fds[0], PERF_EVENT_IOC_ENABLE, 0);
	spin_a_little();
	ioctl(fds[0], PERF_EVENT_IOC_DISABLE, 0);
	uint64_t buf[3 + 64];
	ssize_t got = read(fds[0], buf, sizeof buf);
	rc = got >= 24 && buf[2] > 0 ? 1 : 0;
out:
	while (nfd)
		close(fds[--nfd]);
	return rc;
}

int cp_ev_check(const struct cp_ev *evs, int n, int *split, char *err, size_t errcap)
{
	*split = 0;
	if (n <= 0)
		return 0;
	int exclude_kernel = 0;
	for (int i = 0; i < n; i++) {
		struct perf_event_attr attr;
		cp_ev_attr(&evs[i], exclude_kernel, &attr);
		long fd = ev_open(&attr, -1);
		if (fd < 0 && (errno == EACCES || errno == EPERM) && !exclude_kernel) {
			exclude_kernel = 1; /* the runtime falls back to user-only counting too */
			cp_ev_attr(&evs[i], exclude_kernel, &attr);
			fd = ev_open(&attr, -1);
		}
		if (fd < 0)
			return open_error(&evs[i], errno, err, errcap);
		close((int)fd);
	}
	if (n == 1)
		return 0;
	int rc = try_group(evs, n, exclude_kernel);
	if (rc == 1)
		return 0;
	if (rc == -EMFILE || rc == -ENFILE)
		return open_error(&evs[0], -rc, err, errcap);
	*split = 1; /* each alone works: the kernel will multiplex separate groups */
	return 1;
}

/* ---- listing ---- */

static const char *works(const struct cp_ev *ev)
{
	struct perf_event_attr attr;
	cp_ev_attr(ev, 0, &attr);
	long fd = ev_open(&attr, -1);
	if (fd < 0 && (errno == EACCES || errno == EPERM)) {
		cp_ev_attr(ev, 1, &attr);
		fd = ev_open(&attr, -1);
	}
	if (fd >= 0) {
		close((int)fd);
		return "";
	}
	if (errno == EACCES || errno == EPERM)
		return "  [not permitted: perf_event_paranoid]";
	return cp_ev_is_software(ev) || have_pmu() ? "  [not supported here]"
						   : "  [no hardware counters here]";
}

static int matches(const char *name, const char *pattern)
{
	return !pattern || !*pattern || contains_ci(name, pattern);
}

#ifdef CP_HAVE_PFM
static void list_pfm(FILE *out, const char *pattern)
{
	if (!pfm_ready()) {
		fprintf(out, "\nPMU events: libpfm4 failed to initialize\n");
		return;
	}
	fprintf(out, "\nPMU events (libpfm4, by PMU; use the event name as printed, with "
		     ":UMASK as needed):\n");
	pfm_pmu_t p;
	pfm_for_all_pmus(p)
	{
		pfm_pmu_info_t pi;
		if (!pmu_present(p, &pi))
			continue;
		int shown = 0, total = 0, usable = 0;
		for (int idx = pi.first_event; idx != -1; idx = pfm_get_event_next(idx)) {
			pfm_event_info_t ei;
			if (!event_info(idx, &ei))
				continue;
			char full[256];
			snprintf(full, sizeof full, "%s::%s", pi.name, ei.name);
			struct cp_ev ev;
			memset(&ev, 0, sizeof ev);
			snprintf(ev.name, sizeof ev.name, "%s", ei.name);
			total++;
			const char *mark =
			    pfm_resolve(full, &ev)
				? "  [needs a :UMASK (libpfm4's showevtinfo lists them)]"
				: works(&ev);
			usable += !*mark;
			if (!pattern || !matches(full, pattern))
				continue;
			if (!shown++)
				fprintf(out, "  %s (%s):\n", pi.name, pi.desc);
			char desc[72];
			snprintf(desc, sizeof desc, "%s", ei.desc ? ei.desc : "");
			fprintf(out, "    %-36s %s%s\n", full, desc, mark);
		}
		if (!pattern)
			fprintf(out, "  %-24s %4d events, %4d usable here as named  (%s)\n",
				pi.name, total, usable, pi.desc);
	}
	if (!pattern)
		fprintf(out, "  (--list-events=PATTERN lists the events whose name contains "
			     "PATTERN)\n");
}
#endif

void cp_ev_list(void *file, const char *pattern)
{
	FILE *out = file;
	for (int pass = 0; pass < 2; pass++) {
		int shown = 0;
		for (size_t i = 0; i < cp_ev_table_len; i++) {
			const struct cp_ev_desc *d = &cp_ev_table[i];
			if (cp_ev_kind_is_runtime(d->kind) || (d->kind == CP_EV_SOFTWARE) != pass ||
			    !matches(d->name, pattern))
				continue;
			if (!shown++)
				fprintf(out, "\n%s:\n",
					pass ? "Software events (perf_event)"
					     : "Hardware events (generic perf_event "
					       "names)");
			struct cp_ev ev;
			cp_ev_parse(d->name, strlen(d->name), &ev, NULL, 0);
			char per[32];
			snprintf(per, sizeof per, "@%llu%s", (unsigned long long)d->default_period,
				 d->time_based ? "ns" : "");
			fprintf(out, "  %-24s %-10s %s%s\n", d->name, per, d->help, works(&ev));
		}
	}
	if (matches("rNNNN", pattern))
		fprintf(out,
			"\nRaw events: rNNNN (hex code for this CPU's PMU, as perf takes them; "
			"default @1000003)%s\n",
			have_pmu() ? "" : "  [no hardware counters here]");
#ifdef CP_HAVE_PFM
	list_pfm(out, pattern);
#else
	fprintf(out, "\nPMU events: not available (callpath was built without libpfm4)\n");
#endif
}
