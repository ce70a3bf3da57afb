/* callpath top DIR|PID [options]: the interactive terminal view of a measurement. */
#include "cli/cli.h"

#include "base/error.h"
#include "top/top.h"

#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char usage_text[] =
    "usage: callpath top [DIR|PID|DB] [options]\n"
    "\n"
    "An interactive terminal view of a measurement directory while the program runs (re-read\n"
    "every interval without pausing it) or after it finished, or of a profile database. PID:\n"
    "a process running under callpath record (or callpath record itself).\n"
    "\n"
    "Keys: up/down/PgUp/PgDn/Home/End move; right expands (again: into the row); left\n"
    "collapses (again: to the parent); Enter toggles; e/c expand/collapse all; v next view\n"
    "(top-down, bottom-up, flat); m next metric; s next sort (inclusive, exclusive, name);\n"
    "t next thread (all, then each); r re-read now; q quit.\n"
    "\n"
    "  --view top-down|bottom-up|flat   the view at the start (default top-down)\n"
    "  --interval SECONDS     between re-reads of a running measurement (default 1)\n"
    "  --threshold PCT        leave out rows below PCT% of the total (default 0.5)\n"
    "  -h, --help             show this help\n";

enum { OPT_VIEW = 256, OPT_INTERVAL, OPT_THRESHOLD };

static const struct option long_opts[] = {
    {"view", required_argument, 0, OPT_VIEW},
    {"interval", required_argument, 0, OPT_INTERVAL},
    {"threshold", required_argument, 0, OPT_THRESHOLD},
    {"help", no_argument, 0, 'h'},
    {0, 0, 0, 0},
};

static int parse_opt(int c, const char *arg, struct cp_top_options *o)
{
	static const char *const views[] = {"top-down", "bottom-up", "flat"};
	char *end = NULL;
	int bad = 0;
	switch (c) {
	case OPT_VIEW:
		bad = 1;
		for (int i = 0; i < 3; i++)
			if (!strcmp(arg, views[i]))
				o->view = i, bad = 0;
		break;
	case OPT_INTERVAL:
		o->interval = strtod(arg, &end);
		bad = *end || end == arg || !(o->interval >= 0.05 && o->interval <= 3600);
		break;
	case OPT_THRESHOLD:
		o->threshold = strtod(arg, &end);
		bad = *end || end == arg || !(o->threshold >= 0 && o->threshold <= 100);
		break;
	default:
		return cli_usage(usage_text, c);
	}
	return bad ? cli_bad_value("top", arg, long_opts[c - OPT_VIEW].name) : 0;
}

/* A PID: digits only, and no file of that name here. */
static int is_pid(const char *arg)
{
	struct stat st;
	return arg[0] && strspn(arg, "0123456789") == strlen(arg) && stat(arg, &st);
}

int cmd_top(int argc, char **argv)
{
	struct cp_top_options o;
	cp_top_options_init(&o);
	optind = 1;
	int c;
	while ((c = cli_getopt("top", argc, argv, "h", long_opts)) != -1) {
		int rc = parse_opt(c, optarg, &o);
		if (rc)
			return rc > 0 ? 0 : CLI_EXIT_FAILURE;
	}
	if (argc - optind > 1) {
		cli_error("top", "one measurement (directory, PID or database) expected, got %d",
			  argc - optind);
		return CLI_EXIT_FAILURE;
	}
	const char *path = optind < argc ? argv[optind] : ".";
	char dir[PATH_MAX];
	if (is_pid(path)) {
		if (cp_top_pid_dir(atoi(path), dir, sizeof dir)) {
			cli_error("top", NULL);
			return CLI_EXIT_FAILURE;
		}
		path = dir;
	}
	if (cp_top_run(path, &o)) {
		cli_error("top", NULL);
		return CLI_EXIT_FAILURE;
	}
	return 0;
}
