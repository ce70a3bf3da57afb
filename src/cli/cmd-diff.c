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
	OPT_NORMALIZE = CLI_OPT_VIEW_END,
	OPT_FORMAT,
};

static const struct option long_opts[] = {
    CLI_VIEW_LONG_OPTS,
    {"normalize", required_argument, 0, OPT_NORMALIZE},
    {"format", required_argument, 0, OPT_FORMAT},
    {"output", required_argument, 0, 'o'},
    {"help", no_argument, 0, 'h'},
    {0, 0, 0, 0},
};

/* diff's own options: 0, -1 for a bad value, 1 when unknown. */
static int parse_opt(int c, const char *arg, void *ctx)
{
	static const char *const formats[] = {"text", "csv", "json", "folded"};
	static const char *const norms[] = {"absolute", "total"};
	struct cp_diff_options *d = ctx;
	int v = 0, bad;
	switch (c) {
	case OPT_FORMAT:
		bad = cli_parse_enum(arg, formats, 4, &v);
		d->folded = v == 3;
		d->report.format = v == 3 ? CP_FORMAT_TEXT : v;
		return bad;
	case OPT_NORMALIZE:
		bad = cli_parse_enum(arg, norms, 2, &v);
		d->normalize = v;
		return bad;
	default:
		return 1;
	}
}

static int diff_main(int argc, char **argv)
{
	struct cp_diff_options o;
	cp_diff_options_init(&o);
	struct cli_view_cmd cmd = {"diff", usage_text, long_opts, parse_opt,
				   &o,	   &o.report,  3,	  NULL};
	int rc = cli_view_cmd_parse(&cmd, argc, argv);
	if (rc)
		return rc > 0 ? 0 : CLI_EXIT_FAILURE;
	if (argc - optind != 2) {
		cli_error("diff",
			  "two profiles (A and B) expected, got %d arguments; see "
			  "callpath diff --help",
			  argc - optind);
		return CLI_EXIT_FAILURE;
	}
	FILE *out = cli_output("diff", cmd.outpath);
	if (!out)
		return CLI_EXIT_FAILURE;
	o.report.progress = stderr;
	rc = cp_diff_run(argv[optind], argv[optind + 1], &o, out);
	return cli_output_close("diff", out, cmd.outpath, rc);
}

int cmd_diff(int argc, char **argv)
{
	int rc = diff_main(argc, argv);
	cli_options_free();
	return rc;
}
