/* callpath analyze: correlate a measurement directory with program structure into a
 * profile database (docs/cmd-analyze.md). */
#include "cli/cli.h"

#include "base/error.h"
#include "base/strbuf.h"
#include "base/xalloc.h"
#include "db/analyze.h"
#include "db/sync-objects.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static void usage(FILE *out)
{
	fprintf(out,
		"usage: callpath analyze DIR [-o DB] [--metric NAME=FORMULA]... [-j N] [-q]\n\n"
		"Correlates the measurement directory DIR (written by `callpath record`) with the\n"
		"structure of its load modules (procedures, inlined code, loops, statements; from\n"
		"the structure cache, running `struct` where it misses) and writes a profile\n"
		"database: every thread and process of the run merged, per-thread values kept.\n\n"
		"  -o, --output DB        database file (default DIR/callpath.db)\n"
		"  --metric NAME=FORMULA  add a derived metric, e.g. ipc=instructions/cycles\n"
		"                         (+ - * / parentheses, numbers, min max abs sqrt; "
		"repeatable)\n"
		"  -j, --jobs N           threads correlating and recovering structure (default:\n"
		"                         number of CPUs; the result does not depend on it)\n"
		"  -q, --quiet            no progress or summary output\n"
		"  --mpi                  run on MPI: `mpirun -np K callpath analyze --mpi DIR`\n"
		"                         (each rank correlates a share of the process images)\n");
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* -j N: threads from 1 to 64. */
static int parse_jobs(const char *val, int *jobs)
{
	char *end;
	long n = strtol(val, &end, 10);
	if (*end || end == val || n < 1 || n > 64) {
		cli_error("analyze", "-j takes a number of threads from 1 to 64, not '%s'", val);
		return -1;
	}
	*jobs = (int)n;
	return 0;
}

struct analyze_args {
	const char *dir, *out;
	int quiet, jobs, mpi;
	const char **derived; /* --metric NAME=FORMULA items */
	size_t nderived;
};

/* 0, 1 after --help, -1 after an error (said). */
static int parse_args(int argc, char **argv, struct analyze_args *a)
{
	static const struct option longopts[] = {
	    {"output", required_argument, 0, 'o'},
	    {"metric", required_argument, 0, 'm'},
	    {"jobs", required_argument, 0, 'j'},
	    {"quiet", no_argument, 0, 'q'},
	    {"help", no_argument, 0, 'h'},
	    {"mpi", no_argument, 0, 'M'},
	    {0, 0, 0, 0},
	};
	int c;
	optind = 1;
	while ((c = cli_getopt("analyze", argc, argv, "o:j:qh", longopts)) != -1) {
		switch (c) {
		case 'o':
			a->out = optarg;
			break;
		case 'm':
			a->derived[a->nderived++] = optarg;
			break;
		case 'j':
			if (parse_jobs(optarg, &a->jobs))
				return -1;
			break;
		case 'q':
			a->quiet = 1;
			break;
		case 'M':
			a->mpi = 1;
			break;
		case 'h':
			usage(stdout);
			return 1;
		default: /* said by cli_getopt */
			return -1;
		}
	}
	if (argc - optind > 1) {
		cli_error("analyze", "one measurement directory only (got %s and %s)", argv[optind],
			  argv[optind + 1]);
		return -1;
	}
	if (optind == argc) {
		usage(stderr);
		return -1;
	}
	a->dir = argv[optind];
	return 0;
}

/* --mpi: callpath-analyze-mpi (built with MPI, installed beside the runtime) takes over
 * this process, which mpirun started as one rank, with the same arguments. */
static int exec_mpi(int argc, char **argv)
{
	char helper[4096];
	if (cli_runtime_lib(CLI_ANALYZE_MPI, helper, sizeof helper)) {
		cli_error("analyze",
			  "--mpi needs %s, which this callpath was built without (build it with "
			  "an MPI library installed: libopenmpi-dev)",
			  CLI_ANALYZE_MPI);
		return CLI_EXIT_FAILURE;
	}
	char **args = xcalloc((size_t)argc + 1, sizeof *args);
	args[0] = helper;
	for (int i = 1; i < argc; i++)
		args[i] = argv[i];
	execv(helper, args);
	cli_error("analyze", "cannot run %s: %s", helper, strerror(errno));
	free(args);
	return CLI_EXIT_FAILURE;
}

int cmd_analyze(int argc, char **argv)
{
	struct analyze_args a = {0};
	a.derived = xcalloc((size_t)argc + 1, sizeof(*a.derived));
	int status = CLI_EXIT_FAILURE;
	int rc = parse_args(argc, argv, &a);
	const char *dir = a.dir, *out = a.out;
	int quiet = a.quiet;
	if (rc) {
		status = rc > 0 ? 0 : CLI_EXIT_FAILURE;
		goto done;
	}
	if (a.mpi) {
		status = exec_mpi(argc, argv);
		goto done;
	}
	struct stat st;
	if (stat(dir, &st)) {
		cli_error("analyze", "no measurement directory %s", dir);
		goto done;
	}
	if (!S_ISDIR(st.st_mode)) {
		cli_error("analyze",
			  "%s is not a directory (give the measurement directory that `callpath "
			  "record` wrote)",
			  dir);
		goto done;
	}
	struct cp_analyze_options o;
	cp_analyze_options_init(&o);
	o.jobs = a.jobs;
	o.progress = quiet ? NULL : stderr;
	o.derived = a.derived;
	o.nderived = a.nderived;
	o.defer_finish = 1; /* cp_db_write finishes it beside writing */
	double t0 = now_s();
	struct cp_db db;
	rc = cp_analyze_dir(dir, &o, &db);
	if (rc) {
		cli_error("analyze", NULL);
		goto done;
	}
	struct strbuf path;
	strbuf_init(&path);
	if (out)
		strbuf_addstr(&path, out);
	else
		strbuf_addf(&path, "%s/%s", dir, CP_DB_DEFAULT_NAME);
	rc = cp_db_write(&db, path.buf);
	if (!rc && cp_db_save_sync_if_waits(&db, dir, path.buf)) {
		fprintf(stderr, "warning: waits by synchronization object not saved: %s\n",
			cp_error_message());
		cp_error_clear();
	}
	if (rc) {
		cli_error("analyze", NULL);
	} else {
		status = 0;
		if (!quiet) {
			for (size_t i = 0; i < db.run.nwarnings; i++)
				fprintf(stderr, "warning: %s\n", db.run.warnings[i]);
			size_t nprocs = db.run.nprocs;
			printf("%s: %zu contexts, %zu profiles (%zu process%s), %zu metrics, in "
			       "%.2f s\n",
			       path.buf, db.nscopes, db.nprofiles, nprocs, nprocs == 1 ? "" : "es",
			       db.nmetrics, now_s() - t0);
		}
	}
	strbuf_release(&path);
	cp_db_release(&db);
done:
	free(a.derived);
	return status;
}
