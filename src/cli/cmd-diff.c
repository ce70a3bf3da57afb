/* callpath diff A B [options]: two profiles compared per calling context, loop and line. */
#include "cli/cli.h"

#include "base/error.h"
#include "report/diff.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage_text[] =
    "usage: callpath diff A B [options]\n"
    "\n"
    "Compares the profiles A and B (databases, or measurement directories analyzed first)\n"
    "per calling context, loop and line. Scopes match by load module name, procedure, file\n"
    "name and line, never by address, so two builds of a program compare. Each row shows A,\n"
    "B, B-A, the sampling noise of B-A and whether B-A exceeds 3 times that noise; rows are\n"
    "sorted by B-A, the largest increase (regression) first.\n"
    "\n"
    "  --view top-down|bottom-up|flat   as in callpath report (default top-down)\n"
    "  --metric NAME[,NAME...]  metrics to compare as columns (default: the first)\n"
    "  --sort NAME[:incl|excl]|inclusive|exclusive|name   sort by B-A of the inclusive\n"
    "                         (default) or exclusive values, or by name\n"
    "  --normalize absolute|total  compare values as measured (default), or with B scaled\n"
    "                         to A's total (shares: runs of different length)\n"
    "  --threshold PCT        hide scopes below PCT% of the total in both A and B\n"
    "                         (default 1 for text, 0 for csv/json)\n"
    "  --depth N, --focus FUNC, --flatten N   as in callpath report\n"
    "  --format text|csv|json|folded   folded: differential folded stacks\n"
    "                         (\"frame;frame A B\", for flamegraph.pl)\n"
    "  --ascii                draw the tree with ASCII characters\n"
    "  --no-summary           omit the lines on A and B above the text view\n"
    "  -o FILE                write to FILE instead of standard output\n"
    "  -h, --help             show this help\n";

enum {
	OPT_VIEW = 256,
	OPT_METRIC,
	OPT_SORT,
	OPT_NORMALIZE,
	OPT_THRESHOLD,
	OPT_DEPTH,
	OPT_FOCUS,
	OPT_FLATTEN,
	OPT_FORMAT,
	OPT_ASCII,
	OPT_NO_SUMMARY,
};

static const struct option long_opts[] = {
    {"view", required_argument, 0, OPT_VIEW},
    {"metric", required_argument, 0, OPT_METRIC},
    {"sort", required_argument, 0, OPT_SORT},
    {"normalize", required_argument, 0, OPT_NORMALIZE},
    {"threshold", required_argument, 0, OPT_THRESHOLD},
    {"depth", required_argument, 0, OPT_DEPTH},
    {"focus", required_argument, 0, OPT_FOCUS},
    {"flatten", required_argument, 0, OPT_FLATTEN},
    {"format", required_argument, 0, OPT_FORMAT},
    {"ascii", no_argument, 0, OPT_ASCII},
    {"no-summary", no_argument, 0, OPT_NO_SUMMARY},
    {"output", required_argument, 0, 'o'},
    {"help", no_argument, 0, 'h'},
    {0, 0, 0, 0},
};

static int parse_number(const char *arg, double lo, double hi, double *out)
{
	char *end;
	*out = strtod(arg, &end);
	return *end || end == arg || !(*out >= lo && *out <= hi) ? -1 : 0;
}

/* Returns 0, 1 for --help, or -1 after printing the error. */
static int parse_opt(int c, const char *arg, struct cp_diff_options *d, const char **outp)
{
	static const char *const views[] = {"top-down", "bottom-up", "flat"};
	static const char *const formats[] = {"text", "csv", "json", "folded"};
	static const char *const norms[] = {"absolute", "total"};
	struct cp_report_options *o = &d->report;
	double x = 0;
	int v = 0, bad = 0;
	switch (c) {
	case OPT_VIEW:
		bad = cli_parse_enum(arg, views, 3, &v);
		o->view = v;
		break;
	case OPT_FORMAT:
		bad = cli_parse_enum(arg, formats, 4, &v);
		d->folded = v == 3;
		o->format = v == 3 ? CP_FORMAT_TEXT : v;
		break;
	case OPT_NORMALIZE:
		bad = cli_parse_enum(arg, norms, 2, &v);
		d->normalize = v;
		break;
	case OPT_METRIC:
		bad = cli_parse_metrics(arg, o);
		break;
	case OPT_SORT:
		bad = cli_parse_sort(arg, o);
		break;
	case OPT_THRESHOLD:
		bad = parse_number(arg, 0, 100, &o->threshold);
		break;
	case OPT_DEPTH:
		bad = parse_number(arg, 0, 1e6, &x);
		o->depth = (int)x;
		break;
	case OPT_FLATTEN:
		bad = parse_number(arg, 0, 1000, &x);
		o->flatten = (int)x;
		break;
	case OPT_FOCUS:
		o->focus = arg;
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
	default:
		return cli_usage(usage_text, c);
	}
	return bad ? cli_bad_value("diff", arg, long_opts[c - OPT_VIEW].name) : 0;
}

static int diff_main(int argc, char **argv)
{
	struct cp_diff_options o;
	const char *outpath = NULL;
	cp_diff_options_init(&o);
	optind = 1;
	int c;
	while ((c = cli_getopt("diff", argc, argv, "o:h", long_opts)) != -1) {
		int rc = parse_opt(c, optarg, &o, &outpath);
		if (rc)
			return rc > 0 ? 0 : CLI_EXIT_FAILURE;
	}
	if (argc - optind != 2) {
		cli_error("diff",
			  "two profiles (A and B) expected, got %d arguments; see "
			  "callpath diff --help",
			  argc - optind);
		return CLI_EXIT_FAILURE;
	}
	FILE *out = cli_output("diff", outpath);
	if (!out)
		return CLI_EXIT_FAILURE;
	o.report.progress = stderr;
	int rc = cp_diff_run(argv[optind], argv[optind + 1], &o, out);
	return cli_output_close("diff", out, outpath, rc);
}

int cmd_diff(int argc, char **argv)
{
	int rc = diff_main(argc, argv);
	cli_options_free();
	return rc;
}
