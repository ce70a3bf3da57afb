/* callpath record [options] [--] PROGRAM [ARGS...]
 *
 * Runs PROGRAM with libcallpath-rt.so preloaded (found by cli_runtime_lib),
 * configured through CALLPATH_* environment variables (see src/runtime/core/config.c),
 * waits for it, prints a summary of the measurement and its hottest calling contexts on
 * stderr, and exits with the program's exit status (128+N if signal N killed it). */
#include "cli/cli.h"
#include "db/analyze.h"
#include "report/report.h"
#include "events/events.h"
#include "runtime/sample/catalog.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define RECORD_MAX_EVENTS 16

struct record_opts {
	const char *events[RECORD_MAX_EVENTS];
	int nevents;
	/* perf events (events/events.h), resolved; CALLPATH_EVENTS gets their encoded form */
	struct cp_ev perf[RECORD_MAX_EVENTS];
	char perf_spec[RECORD_MAX_EVENTS][160];
	int nperf;
	int perf_split; /* they do not fit in one group: one group each (multiplexed) */
	const char *outdir;
	int follow_exec;
	int quiet;
	int no_analyze;
	int show_runtime; /* keep the runtime's frames in paths (debugging callpath) */
};

static void record_usage(FILE *out)
{
	fprintf(out, "usage: callpath record [options] [--] PROGRAM [ARGS...]\n\n"
		     "Runs PROGRAM, samples the calling context of every thread, and writes a\n"
		     "measurement directory; then prints a summary and the hottest contexts.\n\n"
		     "options:\n"
		     "  -e, --event EVENT[@PERIOD]  what to sample (repeatable; default cputime).\n"
		     "                              PERIOD: number with ns/us/ms/s (default ns);\n"
		     "                              perf events: events per sample, or fN for N\n"
		     "                              samples per second\n"
		     "      --list-events[=PATTERN] the perf events of this machine (generic,\n"
		     "                              software, PMU events through libpfm4)\n"
		     "  -o, --output DIR            measurement directory\n"
		     "                              (default ./callpath-PROGRAM-PID)\n"
		     "      --no-follow-exec        do not profile programs started with exec\n"
		     "  -q, --quiet                 no summary at the end (the database is still\n"
		     "                              written)\n"
		     "      --no-analyze            leave the measurement as it is: no database\n"
		     "                              (callpath analyze DIR makes it later)\n"
		     "      --show-runtime          keep callpath's own frames (its wrappers) in\n"
		     "                              the paths, for debugging callpath\n"
		     "  -h, --help                  this help\n\nevents:\n");
	for (size_t i = 0; i < CP_EVENT_CATALOG_LEN; i++)
		fprintf(out, "  %-10s %s\n", cp_event_catalog[i].name, cp_event_catalog[i].help);
	fprintf(out, "  %-10s %s\n", "(perf)",
		"perf_event events: cycles, instructions, cache-misses, branch-misses,\n"
		"             cpu-clock, task-clock, page-faults, context-switches, rNNNN, PMU\n"
		"             names (FP_ARITH:SCALAR_DOUBLE); see --list-events");
	fprintf(out, "\nThe exit status is PROGRAM's (128+N if signal N killed it).\n");
}

/* A perf event (events/events.h): resolved here, opened on ourselves later. */
static int record_check_perf_event(const char *spec, struct record_opts *o, int *known)
{
	char err[1024];
	struct cp_ev *ev = &o->perf[o->nperf];
	int rc = cp_ev_resolve(spec, ev, err, sizeof err);
	*known = rc != CP_EV_UNKNOWN;
	if (rc == CP_EV_UNKNOWN)
		return -1;
	if (rc) {
		cli_error("record", "%s", err);
		return -1;
	}
	for (int i = 0; i < o->nperf; i++)
		if (!strcmp(o->perf[i].name, ev->name)) {
			cli_error("record", "event '%s' given twice%s%s%s", ev->name,
				  strncmp(spec, ev->name, strlen(ev->name)) ? " ('" : "",
				  strncmp(spec, ev->name, strlen(ev->name)) ? spec : "",
				  strncmp(spec, ev->name, strlen(ev->name)) ? "' is an alias)" : "");
			return -1;
		}
	if (cp_ev_encode(ev, o->perf_spec[o->nperf], sizeof o->perf_spec[0])) {
		cli_error("record", "event name too long: '%s'", spec);
		return -1;
	}
	o->events[o->nevents] = o->perf_spec[o->nperf++];
	return 0;
}

/* Checks EVENT[@PERIOD] against the catalog and the perf events before anything runs. */
static int record_check_event(const char *spec, struct record_opts *o)
{
	const char *at = strchr(spec, '@');
	size_t len = at ? (size_t)(at - spec) : strlen(spec);
	const struct cp_event_info *info = cp_event_lookup(spec, len);
	uint64_t period;
	int known = 0;
	if (!info && !record_check_perf_event(spec, o, &known))
		return 0;
	if (!info && known)
		return -1;
	if (!info) {
		const char *extra[CP_EVENT_CATALOG_LEN + 1];
		char close[512], name[128];
		for (size_t i = 0; i < CP_EVENT_CATALOG_LEN; i++)
			extra[i] = cp_event_catalog[i].name;
		extra[CP_EVENT_CATALOG_LEN] = NULL;
		snprintf(name, sizeof name, "%.*s", (int)len, spec);
		if (cp_ev_suggest(name, extra, close, sizeof close))
			cli_error("record", "unknown event '%s' (did you mean: %s?); known events:",
				  name, close);
		else
			cli_error("record", "unknown event '%s'; known events:", name);
		for (size_t i = 0; i < CP_EVENT_CATALOG_LEN; i++)
			fprintf(stderr, "  %-10s %s\n", cp_event_catalog[i].name,
				cp_event_catalog[i].help);
		fprintf(stderr, "  and perf events: 'callpath record --list-events' lists those "
				"of this machine\n");
		return -1;
	}
	if (at && info->default_period == 0) {
		cli_error("record",
			  "'%s' takes no period: it counts every call (remove '@%s')", info->name,
			  at + 1);
		return -1;
	}
	if (at && (cp_event_parse_period(at + 1, &period) || period < info->min_period)) {
		cli_error("record",
			  "bad period '%s' for %s: give a number of %s with an optional "
			  "ns/us/ms/s suffix, at least %llu ns (e.g. %s@500us)",
			  at + 1, info->name, info->unit, (unsigned long long)info->min_period,
			  info->name);
		return -1;
	}
	return 0;
}

static int record_parse(int argc, char **argv, struct record_opts *o)
{
	static const struct option longopts[] = {
	    {"event", required_argument, 0, 'e'},
	    {"output", required_argument, 0, 'o'},
	    {"no-follow-exec", no_argument, 0, 'F'},
	    {"quiet", no_argument, 0, 'q'},
	    {"help", no_argument, 0, 'h'},
	    {"list-events", optional_argument, 0, 'L'},
	    {"no-analyze", no_argument, 0, 'N'},
	    {"show-runtime", no_argument, 0, 'R'},
	    {0, 0, 0, 0},
	};
	int c;
	o->follow_exec = 1;
	optind = 1;
	while ((c = getopt_long(argc, argv, "+e:o:qh", longopts, NULL)) != -1) {
		switch (c) {
		case 'e':
			if (o->nevents == RECORD_MAX_EVENTS) {
				cli_error("record", "at most %d events", RECORD_MAX_EVENTS);
				return -1;
			}
			o->events[o->nevents] = optarg;
			if (record_check_event(optarg, o))
				return -1;
			o->nevents++;
			break;
		case 'L':
			printf("Events of callpath record -e (marked: what this machine cannot "
			       "count)\n");
			for (size_t i = 0, shown = 0; i < CP_EVENT_CATALOG_LEN; i++)
				if (!optarg || strstr(cp_event_catalog[i].name, optarg))
					printf("%s  %-24s %s\n",
					       shown++ ? "" : "\nTime and triggers:\n",
					       cp_event_catalog[i].name, cp_event_catalog[i].help);
			cp_ev_list(stdout, optarg);
			return 1;
		case 'o':
			o->outdir = optarg;
			break;
		case 'F':
			o->follow_exec = 0;
			break;
		case 'q':
			o->quiet = 1;
			break;
		case 'N':
			o->no_analyze = 1;
			break;
		case 'R':
			o->show_runtime = 1;
			break;
		case 'h':
			record_usage(stdout);
			return 1;
		default:
			fprintf(stderr, "Run 'callpath record --help' for the options.\n");
			return -1;
		}
	}
	if (o->nperf) {
		char err[1024];
		int rc = cp_ev_check(o->perf, o->nperf, &o->perf_split, err, sizeof err);
		if (rc < 0) {
			cli_error("record", "%s", err);
			return -1;
		}
		if (o->perf_split && !o->quiet)
			fprintf(stderr, "callpath record: the %d perf events do not fit together on "
					"this machine's PMU; they are measured in separate groups "
					"that the kernel multiplexes (values scaled by "
					"enabled/running; see the NOTE in the report)\n",
				o->nperf);
	}
	if (optind >= argc) {
		cli_error("record", "no program given; usage: callpath record [options] [--] "
				    "PROGRAM [ARGS...]");
		return -1;
	}
	return 0;
}

/* Is `prog` something execvp can run? (A clear error beats a child's exit 127.) */
static int record_find_program(const char *prog)
{
	if (strchr(prog, '/'))
		return access(prog, X_OK);
	const char *path = getenv("PATH");
	char buf[PATH_MAX];
	for (const char *p = path ? path : "/usr/bin:/bin"; *p;) {
		size_t n = strcspn(p, ":");
		snprintf(buf, sizeof buf, "%.*s/%s", (int)(n ? n : 1), n ? p : ".", prog);
		if (!access(buf, X_OK))
			return 0;
		p += n + (p[n] == ':');
	}
	return -1;
}

/* Sets LD_PRELOAD (ours first, keeping any existing one) and the CALLPATH_* variables.
 * The runtime library is the build with the wrappers of the trigger families asked for
 * and no others (catalog.h): a wrapper that is not interposed costs the program nothing. */
static int record_environment(const struct record_opts *o, const char *outdir)
{
	char lib[PATH_MAX], name[64], preload[2 * PATH_MAX], events[4096] = "";
	unsigned families = 0;
	for (int i = 0; i < o->nevents; i++)
		families |= cp_trigger_family_bit(o->events[i]);
	cp_runtime_lib_name(families, name, sizeof name);
	if (cli_runtime_lib(name, lib, sizeof lib)) {
		cli_error("record", NULL);
		return -1;
	}
	const char *old = getenv("LD_PRELOAD");
	snprintf(preload, sizeof preload, "%s%s%s", lib, old && *old ? ":" : "", old ? old : "");
	for (int i = 0; i < o->nevents; i++)
		snprintf(events + strlen(events), sizeof events - strlen(events), "%s%s",
			 i ? "," : "", o->events[i]);
	setenv("LD_PRELOAD", preload, 1);
	setenv("CALLPATH_OUTPUT", outdir, 1);
	setenv("CALLPATH_EVENTS", o->nevents ? events : "cputime", 1);
	setenv("CALLPATH_FOLLOW_EXEC", o->follow_exec ? "1" : "0", 1);
	if (o->show_runtime)
		setenv("CALLPATH_SHOW_RUNTIME", "1", 1);
	else
		unsetenv("CALLPATH_SHOW_RUNTIME");
	if (o->perf_split)
		setenv("CALLPATH_PERF_SPLIT", "1", 1);
	else
		unsetenv("CALLPATH_PERF_SPLIT");
	return 0;
}

static int is_measurement_file(const char *name)
{
	size_t n = strlen(name);
	return (n > 5 && !strcmp(name + n - 5, ".proc")) || (n > 4 && !strcmp(name + n - 4, ".thr"));
}

/* A directory that holds an earlier measurement: its files are replaced (perf record
 * replaces perf.data), never mixed with the new run's. Returns how many were removed. */
static int record_clear_dir(const char *dir)
{
	DIR *d = opendir(dir);
	int removed = 0;
	char path[PATH_MAX + 256];
	if (!d)
		return 0;
	for (struct dirent *e; (e = readdir(d));) {
		if (!is_measurement_file(e->d_name))
			continue;
		snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
		removed += !unlink(path);
	}
	closedir(d);
	return removed;
}

static int record_outdir(const struct record_opts *o, const char *prog, char *out, size_t cap)
{
	const char *base = strrchr(prog, '/');
	base = base ? base + 1 : prog;
	if (o->outdir)
		snprintf(out, cap, "%s", o->outdir);
	else
		snprintf(out, cap, "callpath-%s-%d", base, (int)getpid());
	if (record_clear_dir(out) > 0 && !o->quiet)
		fprintf(stderr, "callpath record: replacing the earlier measurement in %s\n", out);
	if (mkdir(out, 0755) && errno != EEXIST) {
		cli_error("record", "cannot create the measurement directory %s: %s", out,
			  strerror(errno));
		return -1;
	}
	/* Absolute, so that a program that changes directory still writes there. */
	char abs[PATH_MAX];
	if (realpath(out, abs))
		snprintf(out, cap, "%s", abs);
	return 0;
}

static volatile pid_t record_child;

/* SIGTERM/SIGHUP sent to callpath are meant for the program: pass them on. */
static void record_forward(int sig)
{
	if (record_child > 0)
		kill(record_child, sig);
}

/* Runs the program and returns its status as an exit code (128+sig when killed). */
static int record_run(char **argv, int *signaled)
{
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		cli_error("record", "fork failed: %s", strerror(errno));
		return -1;
	}
	if (pid == 0) {
		execvp(argv[0], argv);
		fprintf(stderr, "callpath record: cannot run %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	/* The terminal's ^C goes to the program; we only wait for it. */
	record_child = pid;
	signal(SIGINT, SIG_IGN);
	signal(SIGQUIT, SIG_IGN);
	signal(SIGTERM, record_forward);
	signal(SIGHUP, record_forward);
	int status;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR) {
			cli_error("record", "waitpid failed: %s", strerror(errno));
			return -1;
		}
	signal(SIGINT, SIG_DFL);
	signal(SIGQUIT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	if (WIFSIGNALED(status)) {
		*signaled = WTERMSIG(status);
		return 128 + WTERMSIG(status);
	}
	return WEXITSTATUS(status);
}

int cmd_record(int argc, char **argv)
{
	struct record_opts o;
	char outdir[PATH_MAX];
	memset(&o, 0, sizeof o);
	int rc = record_parse(argc, argv, &o);
	if (rc)
		return rc > 0 ? 0 : CLI_EXIT_FAILURE;
	char **prog = argv + optind;
	if (record_find_program(prog[0])) {
		cli_error("record", "cannot run '%s': not found or not executable", prog[0]);
		return 127;
	}
	if (record_outdir(&o, prog[0], outdir, sizeof outdir) || record_environment(&o, outdir))
		return CLI_EXIT_FAILURE;
	int signaled = 0;
	int status = record_run(prog, &signaled);
	if (status < 0)
		return CLI_EXIT_FAILURE;
	unsetenv("LD_PRELOAD");
	if (signaled)
		fprintf(stderr, "callpath record: %s was killed by signal %d (%s)\n", prog[0],
			signaled, strsignal(signaled));
	if (!o.quiet) {
		fprintf(stderr, "callpath record: measurement in %s\n", outdir);
		if (o.no_analyze)
			fprintf(stderr, "callpath record: not analyzed (callpath analyze %s)\n",
				outdir);
		else if (cp_report_print_summary(outdir, stderr, 10))
			cli_error("record", NULL);
	} else if (!o.no_analyze) {
		/* The database, without output: what `report` and `export` read. */
		struct cp_analyze_options ao;
		cp_analyze_options_init(&ao);
		ao.progress = NULL;
		struct cp_db db;
		if (cp_profile_open(outdir, &ao, &db))
			cli_error("record", NULL);
		else
			cp_db_release(&db);
	}
	return status;
}
