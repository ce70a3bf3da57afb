/* callpath report PATH [options]: the three views of a profile database or a measurement
 * directory. */
#include "cli/cli.h"

#include "base/error.h"
#include "db/db.h"
#include "report/report.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage_text[] =
    "usage: callpath report [PATH] [options]\n"
    "\n"
    "Shows the profile PATH: a profile database (callpath analyze), or a measurement\n"
    "directory written by callpath record (analyzed first, saved as PATH/callpath.db).\n"
    "\n"
    "  --view top-down|bottom-up|flat   calling contexts (default), callers of each\n"
    "                                   procedure, or module > file > procedure > loop > line\n"
    "  --metric NAME[,NAME...]  metrics to show as columns (repeatable; default: the first)\n"
    "  --metric NAME=FORMULA  add a derived metric (e.g. ipc=instructions/cycles) and show it\n"
    "  --sort NAME[:incl|excl]  sort siblings by that metric's inclusive (default) or\n"
    "                         exclusive value; or inclusive|exclusive|name (first shown metric)\n"
    "  --stat sum|mean|min|max|stddev  statistic over threads (default sum)\n"
    "  --threshold PCT        hide scopes below PCT% of the total inclusive value\n"
    "                         (default 1 for text, 0 for csv/json)\n"
    "  --depth N              show at most N levels\n"
    "  --focus FUNC           show the subtrees rooted at procedure FUNC\n"
    "  --flatten N            replace the top N levels by their children (flat view: 3 ranks\n"
    "                         all loops and statements of all procedures as peers)\n"
    "  --hot-path[=PCT]       expand only the hot path: the child keeping >= PCT% (default 50)\n"
    "                         of its parent's inclusive value\n"
    "  --thread TIDX|PID:TIDX|all   one thread (by index), or all (default)\n"
    "  --format text|csv|json output format (default text; json: docs/report-json.md)\n"
    "  --ascii                draw the tree with ASCII characters\n"
    "  --no-summary           omit the run summary above the text view\n"
    "  -o FILE                write to FILE instead of standard output\n"
    "  -h, --help             show this help\n";

static int parse_enum(const char *arg, const char *const *names, int n, int *out)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(arg, names[i])) {
			*out = i;
			return 0;
		}
	return -1;
}

static int parse_thread(const char *arg, struct cp_report_options *o)
{
	char *end;
	if (!strcmp(arg, "all")) {
		o->thread = CP_REPORT_ALL_THREADS;
		return 0;
	}
	const char *colon = strchr(arg, ':');
	if (colon) {
		o->thread_pid = (int)strtol(arg, &end, 10);
		if (end != colon || o->thread_pid <= 0)
			return -1;
		arg = colon + 1;
	}
	long t = strtol(arg, &end, 10);
	if (*end || end == arg || t < 0 || t > 1000000)
		return -1;
	o->thread = (int)t;
	return 0;
}

enum {
	OPT_VIEW = 256,
	OPT_METRIC,
	OPT_SORT,
	OPT_THRESHOLD,
	OPT_DEPTH,
	OPT_FOCUS,
	OPT_THREAD,
	OPT_FORMAT,
	OPT_ASCII,
	OPT_NO_SUMMARY,
	OPT_STAT,
	OPT_FLATTEN,
	OPT_HOT_PATH
};

static const struct option long_opts[] = {
    {"view", required_argument, 0, OPT_VIEW},
    {"metric", required_argument, 0, OPT_METRIC},
    {"sort", required_argument, 0, OPT_SORT},
    {"threshold", required_argument, 0, OPT_THRESHOLD},
    {"depth", required_argument, 0, OPT_DEPTH},
    {"focus", required_argument, 0, OPT_FOCUS},
    {"thread", required_argument, 0, OPT_THREAD},
    {"format", required_argument, 0, OPT_FORMAT},
    {"ascii", no_argument, 0, OPT_ASCII},
    {"no-summary", no_argument, 0, OPT_NO_SUMMARY},
    {"stat", required_argument, 0, OPT_STAT},
    {"flatten", required_argument, 0, OPT_FLATTEN},
    {"hot-path", optional_argument, 0, OPT_HOT_PATH},
    {"output", required_argument, 0, 'o'},
    {"help", no_argument, 0, 'h'},
    {0, 0, 0, 0},
};

/* Copies of option arguments that the options point into, freed at the end of cmd_report. */
static char *owned[CP_REPORT_MAX_METRICS + 8];
static size_t nowned;

static char *own(char *s)
{
	if (s && nowned < sizeof owned / sizeof owned[0])
		return owned[nowned++] = s;
	free(s);
	return NULL;
}

static void owned_free(void)
{
	while (nowned)
		free(owned[--nowned]);
}

/* --metric A,B,C=FORMULA: items split at commas outside parentheses (formulas have
 * min(a,b)). */
static int parse_metrics(const char *arg, struct cp_report_options *o)
{
	char *copy = own(strdup(arg));
	if (!copy)
		return -1;
	char *start = copy;
	int depth = 0;
	for (char *c = copy;; c++) {
		if (*c == '(')
			depth++;
		else if (*c == ')')
			depth--;
		if (*c && (*c != ',' || depth > 0))
			continue;
		int end = !*c;
		*c = 0;
		if (!*start || o->nmetrics == CP_REPORT_MAX_METRICS)
			return -1;
		o->metrics[o->nmetrics++] = start;
		if (end)
			break;
		start = c + 1;
	}
	return 0;
}

/* --sort: inclusive|exclusive|name, or NAME[:incl|excl|inclusive|exclusive]. */
static int parse_sort(const char *arg, struct cp_report_options *o)
{
	static const char *const sorts[] = {"inclusive", "exclusive", "name"};
	int v;
	if (!parse_enum(arg, sorts, 3, &v)) {
		o->sort = v;
		o->sort_metric = NULL;
		return 0;
	}
	const char *colon = strrchr(arg, ':');
	o->sort = CP_SORT_INCLUSIVE;
	if (colon && (!strcmp(colon, ":excl") || !strcmp(colon, ":exclusive")))
		o->sort = CP_SORT_EXCLUSIVE;
	else if (!colon || (strcmp(colon, ":incl") && strcmp(colon, ":inclusive")))
		colon = NULL; /* a metric name may hold ':' (FP_ARITH:SCALAR_DOUBLE) */
	o->sort_metric = colon ? own(strndup(arg, (size_t)(colon - arg))) : arg;
	return o->sort_metric && *o->sort_metric ? 0 : -1;
}

/* Returns 0, 1 for --help, or -1 after printing the error. */
static int parse_opt(int c, const char *arg, struct cp_report_options *o, const char **outp)
{
	static const char *const views[] = {"top-down", "bottom-up", "flat"};
	static const char *const formats[] = {"text", "csv", "json"};
	char *end = NULL;
	int v = 0, bad = 0;
	switch (c) {
	case OPT_VIEW:
		bad = parse_enum(arg, views, 3, &v);
		o->view = v;
		break;
	case OPT_SORT:
		bad = parse_sort(arg, o);
		break;
	case OPT_FORMAT:
		bad = parse_enum(arg, formats, 3, &v);
		o->format = v;
		break;
	case OPT_METRIC:
		bad = parse_metrics(arg, o);
		break;
	case OPT_STAT:
		v = cp_db_stat_parse(arg);
		bad = v < 0;
		o->stat = v;
		break;
	case OPT_FLATTEN:
		o->flatten = (int)strtol(arg, &end, 10);
		bad = *end || end == arg || o->flatten < 0 || o->flatten > 1000;
		break;
	case OPT_HOT_PATH:
		o->hot_path = 50;
		if (arg) {
			o->hot_path = strtod(arg, &end);
			bad = *end || end == arg || !(o->hot_path >= 0 && o->hot_path <= 100);
		}
		break;
	case OPT_FOCUS:
		o->focus = arg;
		break;
	case OPT_THREAD:
		bad = parse_thread(arg, o);
		break;
	case OPT_ASCII:
		o->ascii = 1;
		break;
	case OPT_NO_SUMMARY:
		o->summary = 0;
		break;
	case 'o':
		*outp = arg;
		break;
	case OPT_THRESHOLD:
		o->threshold = strtod(arg, &end);
		bad = *end || end == arg || o->threshold < 0 || o->threshold > 100;
		break;
	case OPT_DEPTH:
		o->depth = (int)strtol(arg, &end, 10);
		bad = *end || end == arg || o->depth < 0;
		break;
	case 'h':
		fputs(usage_text, stdout);
		return 1;
	default:
		fputs(usage_text, stderr);
		return -1;
	}
	if (bad) {
		cli_error("report", "invalid value '%s' for --%s (see callpath report --help)", arg,
			  long_opts[c - OPT_VIEW].name);
		return -1;
	}
	return 0;
}

static int report_main(int argc, char **argv)
{
	struct cp_report_options o;
	const char *outpath = NULL;
	cp_report_options_init(&o);
	optind = 1;
	int c;
	while ((c = getopt_long(argc, argv, "o:h", long_opts, NULL)) != -1) {
		int rc = parse_opt(c, optarg, &o, &outpath);
		if (rc)
			return rc > 0 ? 0 : CLI_EXIT_FAILURE;
	}
	if (argc - optind > 1) {
		cli_error(
		    "report",
		    "one profile (database or measurement directory) expected, got %d arguments",
		    argc - optind);
		return CLI_EXIT_FAILURE;
	}
	const char *dir = optind < argc ? argv[optind] : ".";
	FILE *out = stdout;
	if (outpath && !(out = fopen(outpath, "w"))) {
		cli_error("report", "cannot write %s: %m", outpath);
		return CLI_EXIT_FAILURE;
	}
	o.progress = stderr;
	int rc = cp_report_run(dir, &o, out);
	if (out != stdout && fclose(out) && !rc) {
		cli_error("report", "error writing %s", outpath);
		return CLI_EXIT_FAILURE;
	}
	if (rc) {
		cli_error("report", NULL);
		return CLI_EXIT_FAILURE;
	}
	return 0;
}

int cmd_report(int argc, char **argv)
{
	int rc = report_main(argc, argv);
	owned_free();
	return rc;
}
