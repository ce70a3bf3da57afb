/* callpath search [options] -- PROGRAM [ARGS...]: the Performance Consultant
 * (docs/cmd-search.md). The program runs under `record --control` with loop probes allowed
 * (in a child of this process, cp_record_run); this process finds its pid by its control
 * FIFO in the measurement directory and runs the search (src/search/search.h) on it. */
#include "cli/cli.h"

#include "base/error.h"
#include "record/control.h"
#include "record/record.h"
#include "search/search.h"

#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char usage_text[] =
    "usage: callpath search [options] [--] PROGRAM [ARGS...]\n"
    "\n"
    "Runs PROGRAM and searches for its bottlenecks while it runs (Paradyn's Performance\n"
    "Consultant): hypotheses tested on functions and loops, probes inserted and removed\n"
    "through the control channel, true foci refined down to loops.\n"
    "\n"
    "  --threshold PCT        a hypothesis is true at a focus holding PCT% of the\n"
    "                         program's time (default 20)\n"
    "  --cost-limit PCT       the probes' cost stays under PCT% (default 5)\n"
    "  --hypotheses LIST      of CPUBound, ExcessiveSyncWaiting, ExcessiveIOBlocking,\n"
    "                         MemoryBound, comma-separated (default: all; MemoryBound\n"
    "                         where page faults can be counted)\n"
    "  --after S              seconds before the search starts (default 0.5)\n"
    "  --for S                search at most S seconds (default: until nothing is left)\n"
    "  --interval S           seconds per experiment (default 0.5)\n"
    "  --no-deep-start        no sampling phase proposing the hottest functions first\n"
    "  --libraries user|all|none  shared libraries in the code model: those outside the\n"
    "                         system's library directories (default), all, or none\n"
    "  --kill                 end the program (SIGTERM) when the search is done\n"
    "  -o, --output DIR       measurement directory (default callpath-search-PROG); the\n"
    "                         search is stored there (search.json, search.dot)\n"
    "  --format text|json|dot the result on stdout (default text)\n"
    "  -q, --quiet            no progress lines on stderr\n"
    "  -h, --help             this help\n";

enum { O_THR = 256, O_COST, O_HYP, O_AFTER, O_FOR, O_INT, O_NODEEP, O_KILL, O_FMT, O_LIBS };

static const struct option long_opts[] = {
    {"threshold", required_argument, 0, O_THR},
    {"cost-limit", required_argument, 0, O_COST},
    {"hypotheses", required_argument, 0, O_HYP},
    {"after", required_argument, 0, O_AFTER},
    {"for", required_argument, 0, O_FOR},
    {"interval", required_argument, 0, O_INT},
    {"no-deep-start", no_argument, 0, O_NODEEP},
    {"libraries", required_argument, 0, O_LIBS},
    {"kill", no_argument, 0, O_KILL},
    {"format", required_argument, 0, O_FMT},
    {"output", required_argument, 0, 'o'},
    {"quiet", no_argument, 0, 'q'},
    {"help", no_argument, 0, 'h'},
    {0, 0, 0, 0},
};

struct search_cli {
	struct cp_search_opts so;
	const char *outdir;
	int format; /* 0 text, 1 json, 2 dot */
	int kill, quiet, hyps_given;
};

/* Every hypothesis; MemoryBound only where this user may count page faults (the perf
 * event; perf_event_paranoid 2 or lower lets a process count its own). An MPI program
 * (one that needs libmpi): CPUBound and ExcessiveSyncWaiting only, as a measurement
 * holds at most CP_MF_MAX_METRICS (16) metrics and the io and page-fault events would
 * leave no room for MPI's (mpi-time: the waits in MPI calls). */
static unsigned default_hyps(const char *program)
{
	char exe[PATH_MAX];
	if (!cp_record_find_program(program, exe) && cp_record_links_mpi(exe))
		return 1u << CP_HYP_CPU | 1u << CP_HYP_SYNC;
	unsigned h = 1u << CP_HYP_CPU | 1u << CP_HYP_SYNC | 1u << CP_HYP_IO;
	int paranoid = 3;
	FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "r");
	if (f && fscanf(f, "%d", &paranoid) != 1)
		paranoid = 3;
	if (f)
		fclose(f);
	return paranoid <= 2 ? h | 1u << CP_HYP_MEM : h;
}

static int num(const char *arg, double lo, double hi, double *out, const char *opt)
{
	char *end = NULL;
	double v = strtod(arg, &end);
	if (end == arg || *end || !(v >= lo && v <= hi))
		return cli_bad_value("search", arg, opt);
	*out = v;
	return 0;
}

static int parse_hyps(const char *arg, unsigned *out)
{
	char buf[512], *save = NULL;
	snprintf(buf, sizeof buf, "%s", arg);
	*out = 0;
	for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		int h = cp_hyp_find(t);
		if (h < 0) {
			cli_error("search",
				  "unknown hypothesis '%s' (known: CPUBound, ExcessiveSyncWaiting, "
				  "ExcessiveIOBlocking, MemoryBound)",
				  t);
			return -1;
		}
		*out |= 1u << h;
	}
	if (!*out) {
		cli_error("search", "--hypotheses needs at least one hypothesis");
		return -1;
	}
	return 0;
}

static int parse_opt(int c, const char *arg, struct search_cli *s)
{
	static const char *const formats[] = {"text", "json", "dot"};
	static const char *const libs[] = {"none", "user", "all"};
	double pct = 0;
	switch (c) {
	case O_THR:
		if (num(arg, 0.1, 100, &pct, "threshold"))
			return -1;
		s->so.threshold = pct / 100;
		return 0;
	case O_COST:
		if (num(arg, 0.01, 100, &pct, "cost-limit"))
			return -1;
		s->so.cost_limit = pct / 100;
		return 0;
	case O_HYP:
		s->hyps_given = 1;
		return parse_hyps(arg, &s->so.hyps);
	case O_AFTER:
		return num(arg, 0, 3600, &s->so.after, "after");
	case O_FOR:
		return num(arg, 0, 86400, &s->so.for_s, "for");
	case O_INT:
		return num(arg, 0.05, 60, &s->so.interval, "interval");
	case O_NODEEP:
		s->so.deep_start = 0;
		return 0;
	case O_KILL:
		s->kill = 1;
		return 0;
	case O_LIBS:
		return cli_parse_enum(arg, libs, 3, &s->so.libraries)
			   ? cli_bad_value("search", arg, "libraries")
			   : 0;
	case O_FMT:
		return cli_parse_enum(arg, formats, 3, &s->format)
			   ? cli_bad_value("search", arg, "format")
			   : 0;
	case 'o':
		s->outdir = arg;
		return 0;
	case 'q':
		s->quiet = 1;
		return 0;
	default:
		return cli_usage(usage_text, c);
	}
}

/* The record options: the control channel, loop probes, CPU time and the events of the
 * hypotheses. */
static int record_setup(struct search_cli *c, struct cp_record_opts *o, char **argv)
{
	static char runtime[PATH_MAX];
	cp_record_opts_init(o);
	o->name = "search";
	o->argv = argv;
	o->control = 1;
	o->loops = 1;
	if (cli_record_event("search", o, "cputime"))
		return -1;
	for (int h = 0; h < CP_HYP_N; h++)
		if ((c->so.hyps & (1u << h)) && cp_hyp_event(h) &&
		    cli_record_event("search", o, cp_hyp_event(h)))
			return -1;
	if (cli_record_events_check("search", o, c->quiet))
		return -1;
	/* MPI calls measured as record measures them (mpi-time: ExcessiveSyncWaiting) */
	static char mpi_lib[PATH_MAX];
	if (!cli_runtime_lib("libcallpath-mpi.so", mpi_lib, sizeof mpi_lib))
		o->mpi_lib = mpi_lib;
	cp_error_clear();
	return cli_record_runtime("search", o, runtime, sizeof runtime);
}

/* Is process pid the record child or a child of it (the program it started)? Under an
 * MPI launcher the ranks share the directory: each search takes its own rank's program. */
static int ours(int pid, pid_t child)
{
	char path[64], buf[512];
	int ppid = 0;
	if (pid == child)
		return 1;
	snprintf(path, sizeof path, "/proc/%d/stat", pid);
	FILE *f = fopen(path, "r");
	size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
	if (f)
		fclose(f);
	buf[n] = 0;
	const char *p = strrchr(buf, ')'); /* after the command name */
	return p && sscanf(p + 1, " %*c %d", &ppid) == 1 && ppid == child;
}

/* The program's pid: the name of the control FIFO its runtime makes in dir. 0 when the
 * record child ended first (*status set). */
static int find_pid(const char *dir, pid_t child, int *status)
{
	for (int tries = 0; tries < 400; tries++) {
		DIR *d = opendir(dir);
		struct dirent *e;
		int pid = 0;
		while (d && (e = readdir(d)) && !pid) {
			int p = cp_control_fifo_pid(e->d_name);
			if (p && ours(p, child))
				pid = p;
		}
		if (d)
			closedir(d);
		if (pid > 0)
			return pid;
		if (waitpid(child, status, WNOHANG) == child)
			return 0;
		struct timespec ts = {0, 25000000};
		nanosleep(&ts, NULL);
	}
	return -1;
}

static void print_result(const struct cp_search *s, int format, FILE *out)
{
	if (format == 1)
		cp_search_print_json(s, out);
	else if (format == 2)
		cp_search_print_dot(s, out);
	else
		cp_search_print_text(s, out);
	fflush(out);
}

/* search.json and search.dot in the measurement directory (search-rankN.json and
 * search-rankN.dot for MPI rank N > 0: the ranks share it). */
static void store(const struct cp_search *s, const char *dir)
{
	char path[PATH_MAX + 32], base[32] = "search";
	int rank = cp_record_mpi_rank(NULL);
	if (rank > 0)
		snprintf(base, sizeof base, "search-rank%d", rank);
	snprintf(path, sizeof path, "%s/%s.json", dir, base);
	FILE *f = fopen(path, "w");
	if (f) {
		cp_search_print_json(s, f);
		fclose(f);
	}
	snprintf(path, sizeof path, "%s/%s.dot", dir, base);
	f = fopen(path, "w");
	if (f) {
		cp_search_print_dot(s, f);
		fclose(f);
	}
}

static volatile sig_atomic_t interrupted;
static void on_interrupt(int sig)
{
	(void)sig;
	interrupted = 1;
}

/* The search of process pid (s, to release); prints and stores the result. SIGINT and
 * SIGTERM end the search (the partial result is printed); the record child forwards them
 * to the program. */
static int search_pid(struct search_cli *c, int pid, const char *dir, struct cp_search *s)
{
	char exe[PATH_MAX], link[64];
	snprintf(link, sizeof link, "/proc/%d/exe", pid);
	if (!realpath(link, exe)) {
		cli_error("search", "the program ended before the search began");
		return CLI_EXIT_FAILURE;
	}
	c->so.progress = c->quiet ? NULL : stderr;
	c->so.stop = &interrupted;
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_interrupt;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	int rc = cp_search_init(s, &c->so, pid, dir, exe);
	if (!rc)
		rc = cp_search_run(s);
	if (rc) {
		cli_error("search", NULL);
		return CLI_EXIT_FAILURE;
	}
	print_result(s, c->format, stdout);
	store(s, dir);
	if (c->kill && !s->program_exited)
		kill(pid, SIGTERM);
	return 0;
}

/* The analysis of the finished measurement, with the search table. Under MPI, rank 0
 * analyzes the job once the other ranks' files are complete (as record does); its search
 * goes into the database, the others' stay in their search-rankN.json. */
static void analyze(const struct cp_search *s, const char *dir, int searched)
{
	char db[PATH_MAX + 32];
	int nranks = 0, rank = cp_record_mpi_rank(&nranks);
	if (rank > 0)
		return;
	if (rank == 0 && nranks > 1)
		cp_record_wait_ranks(dir, nranks, 10.0);
	snprintf(db, sizeof db, "%s/callpath.db", dir);
	if (cp_record_analyze(dir) || (searched && cp_search_store_db(s, db)))
		cli_error("search", NULL);
}

static int search_main(struct search_cli *c, char **argv)
{
	struct cp_record_opts o;
	struct cp_search s;
	char dir[PATH_MAX], def[PATH_MAX];
	memset(&s, 0, sizeof s);
	if (record_setup(c, &o, argv))
		return CLI_EXIT_FAILURE;
	const char *base = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
	snprintf(def, sizeof def, "callpath-search-%s", base);
	if (cp_record_prepare_dir("search", c->quiet ? NULL : stderr, c->outdir ? c->outdir : def,
				  dir, sizeof dir)) {
		cli_error("search", NULL);
		return CLI_EXIT_FAILURE;
	}
	o.outdir = dir;
	fflush(NULL);
	pid_t child = fork();
	if (child < 0) {
		cli_error("search", "fork: %s", strerror(errno));
		return CLI_EXIT_FAILURE;
	}
	if (!child) {
		struct cp_record_result res;
		int rc = cp_record_run(&o, &res);
		if (rc)
			cli_error("search", NULL);
		_exit(rc ? (rc == CP_ECHILD ? 127 : CLI_EXIT_FAILURE) : res.status);
	}
	int status = 0, rc = 0, pid = find_pid(dir, child, &status);
	if (pid <= 0) {
		cli_error("search", pid ? "the program did not start its control channel"
					: "the program ended before the search began");
		rc = CLI_EXIT_FAILURE;
		if (pid)
			kill(child, SIGTERM);
	} else
		rc = search_pid(c, pid, dir, &s);
	if (pid > 0 && !c->quiet)
		fprintf(stderr, "callpath search: waiting for %s to end%s\n", base,
			c->kill ? "" : " (--kill ends it after the search)");
	while (pid != 0 && waitpid(child, &status, 0) < 0 && errno == EINTR)
		;
	analyze(&s, dir, pid > 0 && !rc);
	cp_search_release(&s);
	if (!c->quiet)
		fprintf(stderr, "callpath search: measurement and search in %s\n", dir);
	return rc;
}

int cmd_search(int argc, char **argv)
{
	struct search_cli c;
	memset(&c, 0, sizeof c);
	cp_search_opts_init(&c.so);
	optind = 1;
	int opt;
	while ((opt = cli_getopt("search", argc, argv, "+o:qh", long_opts)) != -1) {
		int rc = parse_opt(opt, optarg, &c);
		if (rc)
			return rc > 0 ? 0 : CLI_EXIT_FAILURE;
	}
	if (optind >= argc) {
		cli_error("search", "no program given; usage: callpath search [options] [--] "
				    "PROGRAM [ARGS...]");
		return CLI_EXIT_FAILURE;
	}
	if (!c.hyps_given)
		c.so.hyps = default_hyps(argv[optind]);
	return search_main(&c, argv + optind);
}
