/* callpath report DIR [options]: the three views of a measurement directory. */
#include "cli/cli.h"

#include "base/error.h"
#include "report/report.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage_text[] =
	"usage: callpath report [DIR] [options]\n"
	"\n"
	"Shows the profile in the measurement directory DIR (written by callpath record).\n"
	"\n"
	"  --view top-down|bottom-up|flat   calling contexts (default), callers of each\n"
	"                                   procedure, or module > file > procedure > line\n"
	"  --metric NAME          metric to show, sort and threshold by (default: the first)\n"
	"  --sort inclusive|exclusive|name  order of siblings (default inclusive)\n"
	"  --threshold PCT        hide scopes below PCT% of the total inclusive value\n"
	"                         (default 1 for text, 0 for csv/json)\n"
	"  --depth N              show at most N levels\n"
	"  --focus FUNC           show the subtrees rooted at procedure FUNC\n"
	"  --thread TIDX|PID:TIDX|all   one thread (by index), or all summed (default)\n"
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

enum { OPT_VIEW = 256, OPT_METRIC, OPT_SORT, OPT_THRESHOLD, OPT_DEPTH, OPT_FOCUS, OPT_THREAD,
       OPT_FORMAT, OPT_ASCII, OPT_NO_SUMMARY };

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
	{"output", required_argument, 0, 'o'},
	{"help", no_argument, 0, 'h'},
	{0, 0, 0, 0},
};

/* Returns 0, 1 for --help, or -1 after printing the error. */
static int parse_opt(int c, const char *arg, struct cp_report_options *o, const char **outp)
{
	static const char *const views[] = {"top-down", "bottom-up", "flat"};
	static const char *const sorts[] = {"inclusive", "exclusive", "name"};
	static const char *const formats[] = {"text", "csv", "json"};
	char *end = NULL;
	int v = 0, bad = 0;
	switch (c) {
	case OPT_VIEW: bad = parse_enum(arg, views, 3, &v); o->view = v; break;
	case OPT_SORT: bad = parse_enum(arg, sorts, 3, &v); o->sort = v; break;
	case OPT_FORMAT: bad = parse_enum(arg, formats, 3, &v); o->format = v; break;
	case OPT_METRIC: o->metric = arg; break;
	case OPT_FOCUS: o->focus = arg; break;
	case OPT_THREAD: bad = parse_thread(arg, o); break;
	case OPT_ASCII: o->ascii = 1; break;
	case OPT_NO_SUMMARY: o->summary = 0; break;
	case 'o': *outp = arg; break;
	case OPT_THRESHOLD:
		o->threshold = strtod(arg, &end);
		bad = *end || end == arg || o->threshold < 0 || o->threshold > 100;
		break;
	case OPT_DEPTH:
		o->depth = (int)strtol(arg, &end, 10);
		bad = *end || end == arg || o->depth < 0;
		break;
	case 'h': fputs(usage_text, stdout); return 1;
	default: fputs(usage_text, stderr); return -1;
	}
	if (bad) {
		cli_error("report", "invalid value '%s' for --%s (see callpath report --help)", arg,
			  long_opts[c - OPT_VIEW].name);
		return -1;
	}
	return 0;
}

int cmd_report(int argc, char **argv)
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
		cli_error("report", "one measurement directory expected, got %d arguments",
			  argc - optind);
		return CLI_EXIT_FAILURE;
	}
	const char *dir = optind < argc ? argv[optind] : ".";
	FILE *out = stdout;
	if (outpath && !(out = fopen(outpath, "w"))) {
		cli_error("report", "cannot write %s: %m", outpath);
		return CLI_EXIT_FAILURE;
	}
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
