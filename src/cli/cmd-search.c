/* callpath search [options] -- PROGRAM [ARGS...]: the Performance Consultant
 * (docs/cmd-search.md). The program runs under `record --control` with loop probes allowed
 * (in a child of this process, cp_record_run); this process waits for its control FIFO in
 * the measurement directory, chooses the busiest of its process images (a program started
 * through a wrapper has several, src/search/procs.h) and runs the search
 * (src/search/search.h) on it; when that process ends while the program goes on, on the
 * next busiest. */
#include "cli/cli.h"

#include "base/error.h"
#include "base/xalloc.h"
#include "record/control.h"
#include "record/record.h"
#include "search/procs.h"
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
    "  --no-calibrate         keep the built-in probe costs instead of measuring them on\n"
    "                         this machine while the program starts (during --after)\n"
    "  --libraries user|all|none  shared libraries in the code model: those outside the\n"
    "                         system's library directories (default), all, or none\n"
    "  --kill                 end the program (SIGTERM) when the search is done\n"
    "  -o, --output DIR       measurement directory (default callpath-search-PROG); the\n"
    "                         search is stored there (search.json, search.dot)\n"
    "  --format text|json|dot the result on stdout (default text)\n"
    "  -q, --quiet            no progress lines on stderr\n"
    "  -h, --help             this help\n";

enum {
	O_THR = 256,
	O_COST,
	O_HYP,
	O_AFTER,
	O_FOR,
	O_INT,
	O_NODEEP,
	O_KILL,
	O_FMT,
	O_LIBS,
	O_NOCAL
};

static const struct option long_opts[] = {
    {"threshold", required_argument, 0, O_THR},
    {"cost-limit", required_argument, 0, O_COST},
    {"hypotheses", required_argument, 0, O_HYP},
    {"after", required_argument, 0, O_AFTER},
    {"for", required_argument, 0, O_FOR},
    {"interval", required_argument, 0, O_INT},
    {"no-deep-start", no_argument, 0, O_NODEEP},
    {"no-calibrate", no_argument, 0, O_NOCAL},
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
	int kill, quiet, hyps_given, no_calibrate;
	const char *runtime; /* libcallpath-rt.so */
	struct cp_search_calib calib;
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
	case O_NOCAL:
		s->no_calibrate = 1;
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
	c->runtime = runtime;
	return cli_record_runtime("search", o, runtime, sizeof runtime);
}

struct searches {
	struct cp_search *v;
	size_t n;
};

/* The probes' costs measured on this machine (src/search/calib.c) in a thread while the
 * program starts and the search begins (c->so.calib); the constants when that cannot be
 * started (c->so.costs.why says why). */
static void calibrate(struct search_cli *c)
{
	char prog[PATH_MAX];
	struct cp_search_costs *k = &c->so.costs;
	if (c->no_calibrate)
		return;
	if (cli_runtime_lib("callpath-calibrate", prog, sizeof prog)) {
		snprintf(k->why, sizeof k->why, "%s", cp_error_message());
		cp_error_clear();
		return;
	}
	if (cp_search_calib_start(&c->calib, prog, c->runtime))
		snprintf(k->why, sizeof k->why, "%s", c->calib.costs.why);
	else
		c->so.calib = &c->calib;
}

/* The calibration's thread ended (given up if still running); a search that ended while
 * it ran says so. */
static void calibrate_end(struct search_cli *c, struct searches *all)
{
	if (!c->so.calib)
		return;
	cp_search_calib_finish(c->so.calib, 1);
	c->so.calib = NULL;
	for (size_t i = 0; i < all->n; i++)
		if (all->v[i].costs_pending) {
			snprintf(all->v[i].o.costs.why, sizeof all->v[i].o.costs.why,
				 "the search ended before the calibration did");
			cp_search_note(&all->v[i],
				       "probe costs not calibrated (%s): the constants were used",
				       all->v[i].o.costs.why);
		}
}

/* The parent of process pid (/proc), 0 when unknown. */
static int parent_of(int pid)
{
	char path[64], buf[512];
	int ppid = 0;
	snprintf(path, sizeof path, "/proc/%d/stat", pid);
	FILE *f = fopen(path, "r");
	size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
	if (f)
		fclose(f);
	buf[n] = 0;
	const char *p = strrchr(buf, ')'); /* after the command name */
	return p && sscanf(p + 1, " %*c %d", &ppid) == 1 ? ppid : 0;
}

/* Is process pid the record child or a descendant of it (the program it started, or a
 * process the program started: a wrapper without the runtime has none of its own)? Under
 * an MPI launcher the ranks share the directory: each search takes its own rank's. */
static int ours(int pid, pid_t child)
{
	for (int hops = 0; hops < 32 && pid > 1; hops++, pid = parent_of(pid))
		if (pid == child)
			return 1;
	return 0;
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

static void print_result(const struct cp_search *v, size_t n, int format, FILE *out)
{
	if (format == 1)
		cp_search_print_json_all(v, n, out);
	else if (format == 2)
		cp_search_print_dot_all(v, n, out);
	else
		cp_search_print_text_all(v, n, out);
	fflush(out);
}

/* search.json and search.dot in the measurement directory (search-rankN.json and
 * search-rankN.dot for MPI rank N > 0: the ranks share it). */
static void store(const struct cp_search *v, size_t n, const char *dir)
{
	char path[PATH_MAX + 32], base[32] = "search";
	int rank = cp_record_mpi_rank(NULL);
	if (rank > 0)
		snprintf(base, sizeof base, "search-rank%d", rank);
	snprintf(path, sizeof path, "%s/%s.json", dir, base);
	FILE *f = fopen(path, "w");
	if (f) {
		cp_search_print_json_all(v, n, f);
		fclose(f);
	}
	snprintf(path, sizeof path, "%s/%s.dot", dir, base);
	f = fopen(path, "w");
	if (f) {
		cp_search_print_dot_all(v, n, f);
		fclose(f);
	}
}

static volatile sig_atomic_t interrupted;
static void on_interrupt(int sig)
{
	(void)sig;
	interrupted = 1;
}

static double now_s(void)
{
	return cp_search_now();
}

static void sleep_s(double s)
{
	cp_search_sleep(s, &interrupted);
}

/* The first choice of a process measures at least CHOICE_MIN_S (--after included); when
 * nothing was sampled in any process, it waits up to CHOICE_WAIT_S (then takes the newest
 * process); the next choice, after a searched process ended, measures the live ones for up
 * to an interval, until one has samples. */
#define CHOICE_MIN_S 0.25
#define CHOICE_WAIT_S 2.0
#define CHOICE_STEP_S 0.05

/* Images of an executable whose search was complete (its process went on: nothing was
 * left to test) are no candidates: another process of the same code would give the same
 * result. */
static void exclude_searched(struct cp_search_procs *b, const struct searches *all)
{
	for (size_t i = 0; i < b->n; i++)
		for (size_t k = 0; k < all->n && b->p[i].exe; k++)
			if (!all->v[k].program_exited && !strcmp(all->v[k].exe, b->p[i].exe))
				b->p[i].control = 0;
}

static size_t nlive(const struct cp_search_procs *p)
{
	size_t n = 0;
	for (size_t i = 0; i < p->n; i++)
		n += p->p[i].live && p->p[i].control;
	return n;
}

/* The program's process images into p; retried while the directory is being written (a
 * thread file before its process file). */
static void read_procs(struct cp_search_procs *p, const char *dir, pid_t child)
{
	for (int tries = 0; tries < 20; tries++) {
		if (!cp_search_procs_read(p, dir, child))
			return;
		cp_error_clear();
		sleep_s(CHOICE_STEP_S);
	}
}

/* The process image to search: the busiest live one of the program started by child over
 * (a, now], read into b (its index), or -1 when none is left; why in reason. */
static long choose(const struct search_cli *c, const char *dir, pid_t child,
		   const struct searches *all, const struct cp_search_procs *a,
		   struct cp_search_procs *b, double wait, char *reason, size_t cap)
{
	double score = 0, share = 0, t_end = now_s() + wait;
	long i = -1;
	for (;;) {
		read_procs(b, dir, child);
		exclude_searched(b, all);
		i = cp_search_procs_busiest(a, b, c->so.hyps, &score, &share);
		if ((i >= 0 && score > 0 && b->wall - a->wall >= CHOICE_MIN_S) || !nlive(b) ||
		    now_s() >= t_end || interrupted)
			break;
		sleep_s(CHOICE_STEP_S);
	}
	if (i < 0 || (score <= 0 && wait < CHOICE_WAIT_S))
		return -1; /* after a searched process: only one that does something */
	if (nlive(b) == 1)
		snprintf(reason, cap, "the only live process");
	else if (score <= 0)
		snprintf(reason, cap, "nothing sampled in %.1f s: the newest of %zu live processes",
			 b->wall - a->wall, nlive(b));
	else
		snprintf(reason, cap,
			 "the busiest of %zu live processes: %.0f%% of their sampled time in "
			 "%.2f s",
			 nlive(b), 100 * share, b->wall - a->wall);
	return i;
}

/* The search of process image p (s, to release). */
static int search_proc(struct search_cli *c, const struct cp_search_proc *p, const char *dir,
		       struct cp_search *s, const char *reason, int multi, double for_s)
{
	char exe[PATH_MAX], link[64];
	struct cp_search_opts so = c->so;
	snprintf(link, sizeof link, "/proc/%d/exe", p->pid);
	if (p->exe)
		snprintf(exe, sizeof exe, "%s", p->exe);
	else if (!realpath(link, exe)) {
		cli_error("search", "the program ended before the search began");
		return CLI_EXIT_FAILURE;
	}
	so.after = 0; /* measured before the choice */
	so.for_s = for_s;
	so.progress = c->quiet ? NULL : stderr;
	so.stop = &interrupted;
	int rc = cp_search_init(s, &so, p->pid, dir, exe);
	s->gen = p->gen;
	s->multi = multi;
	snprintf(s->command, sizeof s->command, "%.255s", p->command ? p->command : exe);
	snprintf(s->reason, sizeof s->reason, "%s", reason);
	if (!c->quiet)
		fprintf(stderr, "callpath search: searching process %d (%s): %s\n", p->pid,
			s->command, reason);
	if (!rc)
		rc = cp_search_run(s);
	if (rc) {
		cli_error("search", NULL);
		return CLI_EXIT_FAILURE;
	}
	return 0;
}

/* Is the search over after the last search: stopped, or complete in a program of one
 * process image (nimages)? (After a complete search in a program of several, another
 * executable's busy process may be next.) */
static int all_done(const struct search_cli *c, const struct searches *all, size_t nimages,
		    double *for_left)
{
	const struct cp_search *s = &all->v[all->n - 1];
	*for_left = c->so.for_s;
	for (size_t k = 0; k < all->n; k++)
		*for_left -= all->v[k].elapsed;
	return s->interrupted || s->stopped_by_for || (!s->program_exited && nimages < 2) ||
	       (c->so.for_s > 0 && *for_left <= 0) || interrupted;
}

/* Searches the program started by child: after --after, its busiest process image; when
 * that ends while others go on, the next busiest, and so on; after a complete search, the
 * busiest process of another executable, if one does anything. */
static int search_all(struct search_cli *c, const char *dir, pid_t child, struct searches *all)
{
	struct cp_search_procs a, b;
	char reason[200];
	double t0 = now_s(), for_left = c->so.for_s;
	int rc = 0;
	memset(&a, 0, sizeof a);
	memset(&b, 0, sizeof b);
	read_procs(&a, dir, child);
	calibrate(c); /* begins in the time the program is given to start */
	double left = (c->so.after > CHOICE_MIN_S ? c->so.after : CHOICE_MIN_S) - (now_s() - t0);
	sleep_s(left > 0 ? left : 0);
	for (double wait = CHOICE_WAIT_S;;
	     wait = c->so.interval > 2 * CHOICE_MIN_S ? c->so.interval : 2 * CHOICE_MIN_S) {
		long i = choose(c, dir, child, all, &a, &b, wait, reason, sizeof reason);
		if (i < 0)
			break;
		all->v = xrealloc(all->v, (all->n + 1) * sizeof *all->v);
		memset(&all->v[all->n], 0, sizeof *all->v);
		rc = search_proc(c, &b.p[i], dir, &all->v[all->n++], reason, b.n > 1, for_left);
		if (rc) { /* not searched: the earlier searches are the result */
			cp_search_release(&all->v[--all->n]);
			rc = all->n ? 0 : rc;
			break;
		}
		if (all_done(c, all, b.n, &for_left))
			break;
		read_procs(&a, dir, child); /* the next: measured from now */
		if (!c->quiet)
			fprintf(stderr, "callpath search: process %d %s after %.1f s\n",
				all->v[all->n - 1].pid,
				all->v[all->n - 1].program_exited
				    ? "ended"
				    : "searched; looking for another program's busy process",
				now_s() - t0);
	}
	if (!rc && !all->n && !interrupted) {
		cli_error("search", "the program ended before the search began");
		rc = CLI_EXIT_FAILURE;
	}
	cp_search_procs_release(&a);
	cp_search_procs_release(&b);
	return rc;
}

/* --kill: SIGTERM to the program's live processes, the newest first. */
static void kill_program(const char *dir, pid_t child)
{
	struct cp_search_procs p;
	memset(&p, 0, sizeof p);
	read_procs(&p, dir, child);
	for (size_t i = p.n; i-- > 0;)
		if (p.p[i].live)
			kill(p.p[i].pid, SIGTERM);
	cp_search_procs_release(&p);
}

/* The analysis of the finished measurement, with the search table. Under MPI, rank 0
 * analyzes the job once the other ranks' files are complete (as record does); its search
 * goes into the database, the others' stay in their search-rankN.json. */
static void analyze(const struct searches *all, const char *dir)
{
	char db[PATH_MAX + 32];
	int nranks = 0, rank = cp_record_mpi_rank(&nranks);
	if (rank > 0)
		return;
	if (rank == 0 && nranks > 1)
		cp_record_wait_ranks(dir, nranks, 10.0);
	snprintf(db, sizeof db, "%s/callpath.db", dir);
	if (cp_record_analyze(dir) || (all->n && cp_search_store_db_all(all->v, all->n, db)))
		cli_error("search", NULL);
}

/* The searches of the program started by child, printed and stored; --kill ends it. */
static int search_program(struct search_cli *c, const char *dir, pid_t child, struct searches *all)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_interrupt;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	int rc = search_all(c, dir, child, all);
	calibrate_end(c, all);
	if (all->n) {
		print_result(all->v, all->n, c->format, stdout);
		store(all->v, all->n, dir);
	}
	if (c->kill && all->n && !all->v[all->n - 1].program_exited)
		kill_program(dir, child);
	return rc;
}

static int search_main(struct search_cli *c, char **argv)
{
	struct cp_record_opts o;
	struct searches all = {NULL, 0};
	char dir[PATH_MAX], def[PATH_MAX];
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
		rc = search_program(c, dir, child, &all);
	if (pid > 0 && !c->quiet)
		fprintf(stderr, "callpath search: waiting for %s to end%s\n", base,
			c->kill ? "" : " (--kill ends it after the search)");
	while (pid != 0 && waitpid(child, &status, 0) < 0 && errno == EINTR)
		;
	analyze(&all, dir);
	for (size_t k = 0; k < all.n; k++)
		cp_search_release(&all.v[k]);
	free(all.v);
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
