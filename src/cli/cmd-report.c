/* callpath report PATH [options]: the three views of a profile database or a measurement
 * directory. */
#include "cli/cli.h"

#include "base/error.h"
#include "db/db.h"
#include "report/report.h"

#include "format/measure-read.h"

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static const char usage_text[] =
    "usage: callpath report [PATH] [options]\n"
    "\n"
    "Shows the profile PATH: a profile database (callpath analyze), or a measurement\n"
    "directory written by callpath record (analyzed first, saved as PATH/callpath.db).\n"
    "\n"
    "  --view top-down|bottom-up|flat   calling contexts (default), callers of each\n"
    "                                   procedure, or module > file > procedure > loop > line\n"
    "  --view sync            wait time by synchronization object (mutex, condition, barrier,\n"
    "                         joined thread...; needs -e wait) with its top call sites\n"
    "  --metric NAME[,NAME...]  metrics to show as columns (repeatable; default: the first)\n"
    "  --metric NAME=FORMULA  add a derived metric (e.g. ipc=instructions/cycles) and show it\n"
    "  --sort NAME[:incl|excl]  sort siblings by that metric's inclusive (default) or\n"
    "                         exclusive value; or inclusive|exclusive|name (first shown metric)\n"
    "  --stat sum|mean|min|max|stddev  statistic over threads (default sum)\n"
    "  --stat-over threads|ranks  what --stat is over: threads, or MPI ranks (a rank's\n"
    "                         value: the sum over its threads)\n"
    "  --threshold PCT        hide scopes below PCT% of the total inclusive value\n"
    "                         (default 1 for text, 0 for csv/json)\n"
    "  --depth N              show at most N levels\n"
    "  --focus FUNC           show the subtrees rooted at procedure FUNC\n"
    "  --flatten N            replace the top N levels by their children (flat view: 3 ranks\n"
    "                         all loops and statements of all procedures as peers)\n"
    "  --hot-path[=PCT]       expand only the hot path: the child keeping >= PCT% (default 50)\n"
    "                         of its parent's inclusive value\n"
    "  --thread TIDX|PID:TIDX|PID:all|all   one thread (by index), the threads of one\n"
    "                         process, or all (default)\n"
    "  --thread R.T|R.all     thread T (or all threads) of MPI rank R\n"
    "  --rank R               the threads of MPI rank R's program\n"
    "  --format text|csv|json output format (default text; json: docs/report-json.md)\n"
    "  --ascii                draw the tree with ASCII characters\n"
    "  --no-summary           omit the run summary above the text view\n"
    "  --live[=SECONDS]       while the program runs: redraw the view every SECONDS\n"
    "                         (default 1) from the measurement directory, without pausing\n"
    "                         the program or writing anything; ends when it has finished\n"
    "  -o FILE                write to FILE instead of standard output\n"
    "  -h, --help             show this help\n";

static int parse_thread(const char *arg, struct cp_report_options *o)
{
	char *end;
	if (!strcmp(arg, "all")) {
		o->thread = CP_REPORT_ALL_THREADS;
		return 0;
	}
	const char *dot = strchr(arg, '.'), *colon = strchr(arg, ':');
	if (dot && !colon) { /* R.T: thread T of MPI rank R */
		o->rank = (int)strtol(arg, &end, 10);
		if (end != dot || o->rank < 0)
			return -1;
		arg = dot + 1;
		if (!strcmp(arg, "all")) {
			o->thread = CP_REPORT_ALL_THREADS;
			return 0;
		}
	} else if (colon) {
		o->thread_pid = (int)strtol(arg, &end, 10);
		if (end != colon || o->thread_pid <= 0)
			return -1;
		arg = colon + 1;
		if (!strcmp(arg, "all")) {
			o->thread = CP_REPORT_ALL_THREADS;
			return 0;
		}
	}
	long t = strtol(arg, &end, 10);
	if (*end || end == arg || t < 0 || t > 1000000)
		return -1;
	o->thread = (int)t;
	return 0;
}

enum {
	OPT_THREAD = CLI_OPT_VIEW_END,
	OPT_FORMAT,
	OPT_STAT,
	OPT_HOT_PATH,
	OPT_LIVE,
	OPT_RANK,
	OPT_STAT_OVER
};

static const struct option long_opts[] = {
    CLI_VIEW_LONG_OPTS,
    {"thread", required_argument, 0, OPT_THREAD},
    {"rank", required_argument, 0, OPT_RANK},
    {"format", required_argument, 0, OPT_FORMAT},
    {"stat", required_argument, 0, OPT_STAT},
    {"stat-over", required_argument, 0, OPT_STAT_OVER},
    {"hot-path", optional_argument, 0, OPT_HOT_PATH},
    {"live", optional_argument, 0, OPT_LIVE},
    {"output", required_argument, 0, 'o'},
    {"help", no_argument, 0, 'h'},
    {0, 0, 0, 0},
};

static double live_interval = -1; /* --live: seconds between refreshes; < 0 = off */

/* report's own options: 0, -1 for a bad value, 1 when unknown. */
static int parse_opt(int c, const char *arg, void *ctx)
{
	static const char *const formats[] = {"text", "csv", "json"};
	struct cp_report_options *o = ctx;
	char *end = NULL;
	int v = 0, bad = 0;
	switch (c) {
	case OPT_FORMAT:
		bad = cli_parse_enum(arg, formats, 3, &v);
		o->format = v;
		break;
	case OPT_STAT:
		v = cp_db_stat_parse(arg);
		bad = v < 0;
		o->stat = v;
		break;
	case OPT_STAT_OVER:
		bad = strcmp(arg, "threads") && strcmp(arg, "ranks");
		o->stat_over_ranks = !strcmp(arg, "ranks");
		break;
	case OPT_HOT_PATH:
		o->hot_path = 50;
		if (arg) {
			o->hot_path = strtod(arg, &end);
			bad = *end || end == arg || !(o->hot_path >= 0 && o->hot_path <= 100);
		}
		break;
	case OPT_LIVE:
		live_interval = 1;
		if (arg) {
			live_interval = strtod(arg, &end);
			bad =
			    *end || end == arg || !(live_interval >= 0.05 && live_interval <= 3600);
		}
		break;
	case OPT_THREAD:
		bad = parse_thread(arg, o);
		break;
	case OPT_RANK:
		o->rank = (int)strtol(arg, &end, 10);
		bad = *end || end == arg || o->rank < 0;
		break;
	default:
		return 1;
	}
	return bad ? -1 : 0;
}

static volatile sig_atomic_t live_stop;
static void live_on_sigint(int sig)
{
	(void)sig;
	live_stop = 1;
}

/* Redraws the view every live_interval seconds until the program ends or Ctrl-C. On a
 * terminal each refresh replaces the screen; otherwise refreshes follow each other, a
 * header line before each. */
static int report_live(const char *dir, struct cp_report_options *o, FILE *out)
{
	struct stat st;
	if (stat(dir, &st) || !S_ISDIR(st.st_mode)) {
		cli_error("report",
			  "--live needs the measurement directory of a running program "
			  "(callpath record -o DIR ...), not %s",
			  dir);
		return CLI_EXIT_FAILURE;
	}
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = live_on_sigint;
	sigaction(SIGINT, &sa, NULL);
	o->no_write = 1;
	o->progress = NULL;
	int tty = isatty(fileno(out));
	for (unsigned refresh = 1; !live_stop; refresh++) {
		int done = cp_mf_dir_done(dir);
		char when[32];
		time_t now = time(NULL);
		strftime(when, sizeof when, "%H:%M:%S", localtime(&now));
		if (tty)
			fputs("\033[H\033[2J", out);
		fprintf(out, "== callpath report --live %s: refresh %u at %s, program %s ==\n", dir,
			refresh, when, done > 0 ? "finished" : "running");
		int rc = cp_report_run(dir, o, out);
		if (rc && done > 0) {
			cli_error("report", NULL);
			return CLI_EXIT_FAILURE;
		}
		if (rc) /* nothing measured yet, or a file being created: try again */
			fprintf(out, "(no profile yet: %s)\n", cp_error_message());
		fflush(out);
		if (done > 0)
			break;
		struct timespec ts = {
		    (time_t)live_interval,
		    (long)((live_interval - (double)(time_t)live_interval) * 1e9)};
		while (!live_stop && nanosleep(&ts, &ts) && errno == EINTR)
			;
	}
	return 0;
}

static int report_main(int argc, char **argv)
{
	struct cp_report_options opts, *o = &opts;
	cp_report_options_init(o);
	struct cli_view_cmd cmd = {"report", usage_text, long_opts, parse_opt, o, o, 4, NULL};
	int rc = cli_view_cmd_parse(&cmd, argc, argv);
	if (rc)
		return rc > 0 ? 0 : CLI_EXIT_FAILURE;
	if (argc - optind > 1) {
		cli_error(
		    "report",
		    "one profile (database or measurement directory) expected, got %d arguments",
		    argc - optind);
		return CLI_EXIT_FAILURE;
	}
	const char *dir = optind < argc ? argv[optind] : ".";
	FILE *out = cli_output("report", cmd.outpath);
	if (!out)
		return CLI_EXIT_FAILURE;
	o->progress = stderr;
	if (live_interval >= 0) {
		int lrc = report_live(dir, o, out);
		if (out != stdout)
			fclose(out);
		return lrc;
	}
	rc = cp_report_run(dir, o, out);
	return cli_output_close("report", out, cmd.outpath, rc);
}

int cmd_report(int argc, char **argv)
{
	int rc = report_main(argc, argv);
	cli_options_free();
	return rc;
}
