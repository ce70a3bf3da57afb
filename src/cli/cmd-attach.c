/* callpath attach [options] PID
 *
 * Samples a running process from outside with the kernel-copy driver (src/kcopy: perf_event
 * stack copies unwound by callpath's own unwinder), without stopping or changing it, for
 * --for seconds or until Ctrl-C or its end; writes the usual measurement directory, then
 * analyzes it and prints the summary as record does. */
#include "cli/cli.h"
#include "base/error.h"
#include "events/events.h"
#include "kcopy/kcopy.h"
#include "record/record.h"
#include "report/report.h"

#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct attach_cli {
	struct cp_kcopy_opts k;
	const char *outdir;
	const char *events; /* -e as given (--inject: the runtime's CALLPATH_EVENTS) */
	int no_analyze, inject;
	pid_t pid;
};

static void attach_usage(FILE *out)
{
	fprintf(out,
		"usage: callpath attach [options] PID\n\n"
		"Samples the running process PID (every thread, and the threads it starts)\n"
		"without stopping or changing it: the kernel copies each sampled thread's\n"
		"registers and stack top, callpath unwinds them. Ends after --for, at Ctrl-C\n"
		"or when the process ends; then prints a summary like record.\n\n"
		"options:\n"
		"      --for SECONDS       sample this long (default: until Ctrl-C or the end)\n"
		"  -e, --event EVENT[@PERIOD]  cputime (default, 1 ms of CPU time) or a perf\n"
		"                          event (cycles, page-faults, ...; fN = N per second)\n"
		"  -o, --output DIR        measurement directory (default\n"
		"                          ./callpath-NAME-PID)\n"
		"      --stack-bytes N     user stack copied per sample (default 16384)\n"
		"      --inject            load callpath's runtime into the process instead\n"
		"                          (ptrace; realtime, probe --pid); it stays dormant\n"
		"  -q, --quiet             no summary at the end\n"
		"      --no-analyze        leave the measurement as it is: no database\n"
		"  -h, --help              this help\n");
}

static int attach_event(struct attach_cli *c, const char *spec)
{
	char err[1024];
	int rc = cp_ev_resolve(spec, &c->k.event, err, sizeof err);

	if (rc == CP_EV_UNKNOWN)
		cli_error("attach", "unknown event '%s' (callpath record --list-events)", spec);
	else if (rc)
		cli_error("attach", "%s", err);
	return rc ? -1 : 0;
}

static int attach_number(const char *what, const char *text, double *out)
{
	char *end;
	*out = strtod(text, &end);
	if (end == text || *end || *out <= 0) {
		cli_error("attach", "%s needs a positive number, not '%s'", what, text);
		return -1;
	}
	return 0;
}

static int attach_parse(int argc, char **argv, struct attach_cli *c)
{
	static const struct option longopts[] = {
	    {"for", required_argument, 0, 'f'},
	    {"event", required_argument, 0, 'e'},
	    {"output", required_argument, 0, 'o'},
	    {"quiet", no_argument, 0, 'q'},
	    {"no-analyze", no_argument, 0, 'N'},
	    {"stack-bytes", required_argument, 0, 'S'},
	    {"inject", no_argument, 0, 'I'},
	    {"help", no_argument, 0, 'h'},
	    {0, 0, 0, 0},
	};
	double v;
	int ch;

	optind = 1;
	while ((ch = cli_getopt("attach", argc, argv, "e:o:qh", longopts)) != -1) {
		switch (ch) {
		case 'f':
			if (attach_number("--for", optarg, &c->k.seconds))
				return -1;
			break;
		case 'e':
			if (attach_event(c, optarg))
				return -1;
			c->events = optarg;
			break;
		case 'I':
			c->inject = 1;
			break;
		case 'o':
			c->outdir = optarg;
			break;
		case 'q':
			c->k.quiet = 1;
			break;
		case 'N':
			c->no_analyze = 1;
			break;
		case 'S':
			if (attach_number("--stack-bytes", optarg, &v))
				return -1;
			c->k.stack_bytes = ((uint32_t)(v > 65000 ? 65000 : v) + 7) & ~7u;
			break;
		case 'h':
			attach_usage(stdout);
			return 1;
		default:
			return -1;
		}
	}
	if (optind != argc - 1 || (c->pid = (pid_t)atoi(argv[optind])) <= 0) {
		cli_error("attach", "usage: callpath attach [options] PID");
		return -1;
	}
	return 0;
}

/* ./callpath-NAME-PID, NAME from /proc/PID/comm. */
static void attach_default_dir(pid_t pid, char *out, size_t cap)
{
	char path[64], name[32] = "process";
	FILE *f;

	snprintf(path, sizeof path, "/proc/%d/comm", (int)pid);
	if ((f = fopen(path, "r"))) {
		if (fgets(name, sizeof name, f))
			name[strcspn(name, "\n/")] = 0;
		fclose(f);
	}
	snprintf(out, cap, "callpath-%s-%d", name[0] ? name : "process", (int)pid);
}

static int attach_kcopy(struct attach_cli *c, struct cp_kcopy_result *res)
{
	if (cp_kcopy_attach(c->pid, &c->k, res)) {
		cli_error("attach", NULL);
		return -1;
	}
	if (!c->k.quiet)
		fprintf(stderr, "callpath attach: %llu samples%s; measurement in %s\n",
			(unsigned long long)res->samples, res->exited ? " (the process ended)" : "",
			c->k.outdir);
	return 0;
}

static int attach_inject(struct attach_cli *c, const char *outdir)
{
	int ended = 0;
	if (c->k.event.kind == CP_EV_TRIGGER) {
		cli_error("attach",
			  "%s needs the runtime preloaded (its calls are interposed); "
			  "use callpath record",
			  c->k.event.name);
		return -1;
	}
	if (cli_attach_inject(c->pid, outdir, c->events, c->k.seconds, c->k.quiet, &ended)) {
		cli_error("attach", NULL);
		return -1;
	}
	if (!c->k.quiet)
		fprintf(stderr, "callpath attach: measurement in %s%s\n", outdir,
			ended ? " (the process ended)" : "");
	return 0;
}

int cmd_attach(int argc, char **argv)
{
	struct attach_cli c;
	struct cp_kcopy_result res;
	char dir[PATH_MAX], outdir[PATH_MAX];
	int rc;

	memset(&c, 0, sizeof c);
	cp_kcopy_opts_init(&c.k);
	rc = attach_parse(argc, argv, &c);
	if (rc)
		return rc > 0 ? 0 : CLI_EXIT_FAILURE;
	if (c.outdir)
		snprintf(dir, sizeof dir, "%s", c.outdir);
	else
		attach_default_dir(c.pid, dir, sizeof dir);
	if (cp_kcopy_check(c.pid)) {
		cli_error("attach", NULL);
		return CLI_EXIT_FAILURE;
	}
	if (cp_record_prepare_dir("attach", c.k.quiet ? NULL : stderr, dir, outdir,
				  sizeof outdir)) {
		cli_error("attach", NULL);
		return CLI_EXIT_FAILURE;
	}
	c.k.outdir = outdir;
	if (c.inject ? attach_inject(&c, outdir) : attach_kcopy(&c, &res))
		return CLI_EXIT_FAILURE;
	if (c.no_analyze)
		return 0;
	if (c.k.quiet ? cp_record_analyze(outdir) : cp_report_print_summary(outdir, stderr, 10)) {
		cli_error("attach", NULL);
		return CLI_EXIT_FAILURE;
	}
	return 0;
}
