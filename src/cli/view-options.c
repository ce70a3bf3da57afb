/* Option values of the report's views, parsed alike by report and diff. */
#include "cli/cli.h"

#include "report/report.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

int cli_parse_enum(const char *arg, const char *const *names, int n, int *out)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(arg, names[i])) {
			*out = i;
			return 0;
		}
	return -1;
}

/* Copies of option arguments that the options point into, freed by cli_options_free. */
static char *owned[CP_REPORT_MAX_METRICS + 8];
static size_t nowned;

static char *own(char *s)
{
	if (s && nowned < sizeof owned / sizeof owned[0])
		return owned[nowned++] = s;
	free(s);
	return NULL;
}

void cli_options_free(void)
{
	while (nowned)
		free(owned[--nowned]);
}

/* --metric A,B,C=FORMULA: items split at commas outside parentheses (formulas have
 * min(a,b)). */
int cli_parse_metrics(const char *arg, struct cp_report_options *o)
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
int cli_parse_sort(const char *arg, struct cp_report_options *o)
{
	static const char *const sorts[] = {"inclusive", "exclusive", "name"};
	int v;
	if (!cli_parse_enum(arg, sorts, 3, &v)) {
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

/* A whole number in [lo, hi]: 0, or -1. */
static int parse_int(const char *arg, long lo, long hi, int *out)
{
	char *end;
	long v = strtol(arg, &end, 10);
	*out = (int)v;
	return *end || end == arg || v < lo || v > hi ? -1 : 0;
}

int cli_view_option(int c, const char *arg, struct cp_report_options *o, int nviews)
{
	static const char *const views[] = {"top-down", "bottom-up", "flat", "sync"};
	char *end;
	int v = 0, bad = 0;
	switch (c) {
	case CLI_OPT_VIEW:
		bad = cli_parse_enum(arg, views, nviews, &v);
		o->view = v;
		return bad;
	case CLI_OPT_METRIC:
		return cli_parse_metrics(arg, o);
	case CLI_OPT_SORT:
		return cli_parse_sort(arg, o);
	case CLI_OPT_THRESHOLD:
		o->threshold = strtod(arg, &end);
		return *end || end == arg || !(o->threshold >= 0 && o->threshold <= 100) ? -1 : 0;
	case CLI_OPT_DEPTH:
		return parse_int(arg, 0, 1000000, &o->depth);
	case CLI_OPT_FLATTEN:
		return parse_int(arg, 0, 1000, &o->flatten);
	case CLI_OPT_FOCUS:
		o->focus = arg;
		return 0;
	case CLI_OPT_ASCII:
		o->ascii = 1;
		return 0;
	case CLI_OPT_NO_SUMMARY:
		o->summary = 0;
		return 0;
	default:
		return 1;
	}
}

static int view_cmd_option(int c, const char *arg, void *ctx)
{
	struct cli_view_cmd *cmd = ctx;
	int bad = cli_view_option(c, arg, cmd->o, cmd->nviews);
	if (bad > 0 && c == 'o') {
		cmd->outpath = arg;
		return 0;
	}
	if (bad > 0)
		bad = cmd->option(c, arg, cmd->ctx);
	if (bad > 0)
		return cli_usage(cmd->usage, c);
	return bad ? cli_bad_option(cmd->name, arg, cmd->longopts, c) : 0;
}

int cli_view_cmd_parse(struct cli_view_cmd *cmd, int argc, char **argv)
{
	return cli_parse_args(cmd->name, argc, argv, "o:h", cmd->longopts, view_cmd_option, cmd);
}
