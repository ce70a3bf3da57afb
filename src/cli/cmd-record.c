/* callpath record [options] [--] PROGRAM [ARGS...]
 *
 * Parses the options into a struct cp_record_opts, runs the program with cp_record_run()
 * (src/record: libcallpath-rt.so preloaded, found by cli_runtime_lib), prints
 * a summary of the measurement and its hottest calling contexts on stderr, and exits with
 * the program's exit status (128+N if signal N killed it). The -e parsing and the summary
 * are shared with `callpath probe` (cli.h). Under mpirun, rank 0 alone speaks. */
#include "cli/cli.h"
#include "base/error.h"
#include "events/events.h"
#include "record/record.h"
#include "report/report.h"

#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* -e: the perf events (events/events.h), resolved; CALLPATH_EVENTS gets their encoded
 * form. One command runs per process, so one set. */
static struct {
	struct cp_ev perf[CP_RECORD_MAX_EVENTS];
	char perf_spec[CP_RECORD_MAX_EVENTS][160];
	int nperf;
} record_perf;

struct record_cli {
	struct cp_record_opts run;
	int quiet;
	int no_analyze;
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
		     "      --control               let callpath probe --pid PID add and remove\n"
		     "                              probes while the program runs\n"
		     "      --show-runtime          keep callpath's own frames (its wrappers) in\n"
		     "                              the paths, for debugging callpath\n"
		     "      --mpi, --no-mpi         measure MPI calls (mpi-time, bytes, messages\n"
		     "                              by context; libcallpath-mpi.so): default when\n"
		     "                              PROGRAM needs libmpi or is mpirun/mpiexec\n"
		     "      --mechanism kernel|signal  how samples are taken: the runtime's\n"
		     "                              signal handler (default), or the kernel's\n"
		     "                              stack copies unwound by callpath (static\n"
		     "                              executables: always kernel)\n"
		     "  -h, --help                  this help\n\nevents:\n");
	for (size_t i = 0; i < cp_ev_runtime_len; i++)
		fprintf(out, "  %-10s %s\n", cp_ev_table[i].name, cp_ev_table[i].help);
	fprintf(out, "  %-10s %s\n", "(perf)",
		"perf_event events: cycles, instructions, cache-misses, branch-misses,\n"
		"             cpu-clock, task-clock, page-faults, context-switches, rNNNN, PMU\n"
		"             names (FP_ARITH:SCALAR_DOUBLE); see --list-events");
	fprintf(out, "\nThe exit status is PROGRAM's (128+N if signal N killed it).\n");
}

/* A perf event (events/events.h): resolved here, opened on ourselves later. */
static int record_check_perf_event(const char *cmd, const char *spec, struct cp_record_opts *o,
				   int *known)
{
	char err[1024];
	struct cp_ev *ev = &record_perf.perf[record_perf.nperf];
	int rc = cp_ev_resolve(spec, ev, err, sizeof err);
	*known = rc != CP_EV_UNKNOWN;
	if (rc == CP_EV_UNKNOWN)
		return -1;
	if (rc) {
		cli_error(cmd, "%s", err);
		return -1;
	}
	for (int i = 0; i < record_perf.nperf; i++)
		if (!strcmp(record_perf.perf[i].name, ev->name)) {
			int alias = strncmp(spec, ev->name, strlen(ev->name)) != 0;
			cli_error(cmd, "event '%s' given twice%s%s%s", ev->name, alias ? " ('" : "",
				  alias ? spec : "", alias ? "' is an alias)" : "");
			return -1;
		}
	char *encoded = record_perf.perf_spec[record_perf.nperf];
	if (cp_ev_encode(ev, encoded, sizeof record_perf.perf_spec[0])) {
		cli_error(cmd, "event name too long: '%s'", spec);
		return -1;
	}
	record_perf.nperf++;
	o->events[o->nevents] = encoded;
	return 0;
}

static void record_unknown_event(const char *cmd, const char *spec, size_t len)
{
	char close[512], name[128];
	snprintf(name, sizeof name, "%.*s", (int)len, spec);
	if (cp_ev_suggest(name, NULL, close, sizeof close)) /* the catalog's names included */
		cli_error(cmd, "unknown event '%s' (did you mean: %s?); known events:", name,
			  close);
	else
		cli_error(cmd, "unknown event '%s'; known events:", name);
	for (size_t i = 0; i < cp_ev_runtime_len; i++)
		fprintf(stderr, "  %-10s %s\n", cp_ev_table[i].name, cp_ev_table[i].help);
	fprintf(stderr, "  and perf events: 'callpath record --list-events' lists those "
			"of this machine\n");
}

/* Checks EVENT[@PERIOD] against the event catalog (events/events.h) before anything runs:
 * the runtime's own events are passed on as typed, perf events resolved and encoded. */
static int record_check_event(const char *cmd, const char *spec, struct cp_record_opts *o)
{
	const char *at = strchr(spec, '@');
	size_t len = at ? (size_t)(at - spec) : strlen(spec);
	const struct cp_ev_desc *d = cp_ev_find(spec, len);
	int known = 0;
	if (d && cp_ev_kind_is_runtime(d->kind)) {
		struct cp_ev ev;
		char err[512];
		if (cp_ev_parse(spec, strlen(spec), &ev, err, sizeof err)) {
			cli_error(cmd, "%s", err);
			return -1;
		}
		return 0;
	}
	if (!record_check_perf_event(cmd, spec, o, &known))
		return 0;
	if (!known)
		record_unknown_event(cmd, spec, len);
	return -1;
}

int cli_record_event(const char *cmd, struct cp_record_opts *o, const char *spec)
{
	if (o->nevents == CP_RECORD_MAX_EVENTS) {
		cli_error(cmd, "at most %d events", CP_RECORD_MAX_EVENTS);
		return -1;
	}
	o->events[o->nevents] = spec;
	if (record_check_event(cmd, spec, o))
		return -1;
	o->nevents++;
	return 0;
}

int cli_record_events_check(const char *cmd, struct cp_record_opts *o, int quiet)
{
	char err[1024];
	if (!record_perf.nperf)
		return 0;
	if (cp_ev_check(record_perf.perf, record_perf.nperf, &o->perf_split, err, sizeof err) < 0) {
		cli_error(cmd, "%s", err);
		return -1;
	}
	if (o->perf_split && !quiet)
		fprintf(stderr,
			"callpath %s: the %d perf events do not fit together on this machine's "
			"PMU; they are measured in separate groups that the kernel multiplexes "
			"(values scaled by enabled/running; see the NOTE in the report)\n",
			cmd, record_perf.nperf);
	return 0;
}

static void record_list_events(const char *pattern)
{
	printf("Events of callpath record -e (marked: what this machine cannot count)\n");
	for (size_t i = 0, shown = 0; i < cp_ev_runtime_len; i++)
		if (!pattern || strstr(cp_ev_table[i].name, pattern))
			printf("%s  %-24s %s\n", shown++ ? "" : "\nTime and triggers:\n",
			       cp_ev_table[i].name, cp_ev_table[i].help);
	cp_ev_list(stdout, pattern);
}

static int record_parse(int argc, char **argv, struct record_cli *c)
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
	    {"mpi", no_argument, 0, 'M'},
	    {"no-mpi", no_argument, 0, 'm'},
	    {"mechanism", required_argument, 0, 'K'},
	    {"control", no_argument, 0, 'C'},
	    {0, 0, 0, 0},
	};
	struct cp_record_opts *o = &c->run;
	int ch;
	optind = 1;
	while ((ch = cli_getopt("record", argc, argv, "+e:o:qh", longopts)) != -1) {
		switch (ch) {
		case 'e':
			if (cli_record_event("record", o, optarg))
				return -1;
			break;
		case 'L':
			record_list_events(optarg);
			return 1;
		case 'o':
			o->outdir = optarg;
			break;
		case 'F':
			o->follow_exec = 0;
			break;
		case 'q':
			c->quiet = 1;
			break;
		case 'N':
			c->no_analyze = 1;
			break;
		case 'R':
			o->show_runtime = 1;
			break;
		case 'M':
			o->mpi = 1;
			break;
		case 'm':
			o->mpi = 0;
			break;
		case 'K':
			if (!strcmp(optarg, "kernel") || !strcmp(optarg, "signal")) {
				o->mechanism = optarg[0] == 'k' ? CP_RECORD_MECH_KERNEL
								: CP_RECORD_MECH_SIGNAL;
				break;
			}
			cli_error("record", "--mechanism is kernel or signal, not '%s'", optarg);
			return -1;
		case 'C':
			o->control = 1;
			break;
		case 'h':
			record_usage(stdout);
			return 1;
		default: /* said by cli_getopt */
			return -1;
		}
	}
	if (cli_record_events_check("record", o, c->quiet))
		return -1;
	if (optind >= argc) {
		cli_error("record", "no program given; usage: callpath record [options] [--] "
				    "PROGRAM [ARGS...]");
		return -1;
	}
	o->argv = argv + optind;
	return 0;
}

static void record_summary(const struct cp_record_opts *o, const struct cp_record_result *res,
			   int no_analyze)
{
	const char *cmd = o->name;
	fprintf(stderr, "callpath %s: measurement in %s\n", cmd, res->outdir);
	if (no_analyze)
		fprintf(stderr, "callpath %s: not analyzed (callpath analyze %s)\n", cmd,
			res->outdir);
	else if (cp_report_print_summary(res->outdir, stderr, 10))
		cli_error(cmd, NULL);
}

/* Rank 0 analyzes the whole job: the other ranks' files first. */
static void record_wait_ranks(const char *cmd, const char *dir, int quiet)
{
	int nranks = 0;
	cp_record_mpi_rank(&nranks);
	if (nranks < 2)
		return;
	int done = cp_record_wait_ranks(dir, nranks, 10.0);
	if (done < nranks && !quiet)
		fprintf(stderr,
			"callpath %s: %d of %d ranks finished their measurement; the summary "
			"shows what the others measured so far\n",
			cmd, done, nranks);
}

/* The runtime library is the build with the wrappers of the trigger families asked for
 * and no others (cp_runtime_lib_name, events/events.h): a wrapper that is not interposed
 * costs the program nothing. */
int cli_record_runtime(const char *cmd, struct cp_record_opts *o, char *buf, size_t size)
{
	char name[64];
	unsigned families = 0;
	for (int i = 0; i < o->nevents; i++)
		families |= cp_trigger_family_bit(o->events[i]);
	cp_runtime_lib_name(families, name, sizeof name);
	if (cli_runtime_lib(name, buf, size)) {
		cli_error(cmd, NULL);
		return -1;
	}
	o->runtime = buf;
	return 0;
}

int cli_record_run(struct cp_record_opts *o, int quiet, int no_analyze)
{
	struct cp_record_result res;
	static char runtime[PATH_MAX]; /* o keeps pointing at it */
	const char *cmd = o->name;
	if (cli_record_runtime(cmd, o, runtime, sizeof runtime))
		return CLI_EXIT_FAILURE;
	/* Under mpirun, the other ranks keep quiet: rank 0 tells about the whole job. */
	int rank = cp_record_mpi_rank(NULL);
	o->messages = quiet || rank > 0 ? NULL : stderr;
	int rc = cp_record_run(o, &res);
	if (rc) {
		cli_error(cmd, NULL);
		return rc == CP_ECHILD ? 127 : CLI_EXIT_FAILURE;
	}
	if (res.signal)
		fprintf(stderr, "callpath %s: %s was killed by signal %d (%s)\n", cmd, o->argv[0],
			res.signal, strsignal(res.signal));
	if (rank > 0)
		return res.status; /* rank 0 analyzes the job's directory */
	if (rank == 0)
		record_wait_ranks(cmd, res.outdir, quiet);
	if (!quiet)
		record_summary(o, &res, no_analyze);
	else if (!no_analyze && cp_record_analyze(res.outdir))
		cli_error(cmd, NULL);
	return res.status;
}

int cmd_record(int argc, char **argv)
{
	struct record_cli c;
	static char mpi_lib[PATH_MAX];
	memset(&c, 0, sizeof c);
	cp_record_opts_init(&c.run);
	int rc = record_parse(argc, argv, &c);
	if (rc)
		return rc > 0 ? 0 : CLI_EXIT_FAILURE;
	/* Not found (a build without MPI): --mpi says so; otherwise MPI calls go unmeasured. */
	if (c.run.mpi && !cli_runtime_lib("libcallpath-mpi.so", mpi_lib, sizeof mpi_lib))
		c.run.mpi_lib = mpi_lib;
	cp_error_clear();
	return cli_record_run(&c.run, c.quiet, c.no_analyze);
}
