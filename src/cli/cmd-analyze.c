/* callpath analyze: correlate a measurement directory with program structure into a
 * profile database (docs/cmd-analyze.md). */
#include "cli/cli.h"

#include "base/error.h"
#include "base/strbuf.h"
#include "base/xalloc.h"
#include "db/analyze.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

static void usage(FILE *out)
{
	fprintf(
	    out,
	    "usage: callpath analyze DIR [-o DB] [--metric NAME=FORMULA]... [-j N] [-q]\n\n"
	    "Correlates the measurement directory DIR (written by `callpath record`) with the\n"
	    "structure of its load modules (procedures, inlined code, loops, statements; from\n"
	    "the structure cache, running `struct` where it misses) and writes a profile\n"
	    "database: every thread and process of the run merged, per-thread values kept.\n\n"
	    "  -o DB                  database file (default DIR/callpath.db)\n"
	    "  --metric NAME=FORMULA  add a derived metric, e.g. ipc=instructions/cycles\n"
	    "                         (+ - * / parentheses, numbers, min max abs sqrt; "
	    "repeatable)\n"
	    "  -j N                   threads for structure recovery (default: number of CPUs)\n"
	    "  -q                     no progress or summary output\n");
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int cmd_analyze(int argc, char **argv)
{
	const char *dir = NULL, *out = NULL;
	int quiet = 0, jobs = 0;
	const char **derived = xcalloc((size_t)argc + 1, sizeof(*derived));
	size_t nderived = 0;
	int status = CLI_EXIT_FAILURE;
	for (int i = 1; i < argc; i++) {
		const char *arg = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(arg, "-h") || !strcmp(arg, "--help")) {
			usage(stdout);
			status = 0;
			goto done;
		}
		int takes = !strcmp(arg, "-o") || !strcmp(arg, "-j") || !strcmp(arg, "--metric");
		if (takes && !val) {
			cli_error("analyze", "option %s needs a value", arg);
			goto done;
		}
		if (!strcmp(arg, "-o")) {
			out = val;
			i++;
		} else if (!strcmp(arg, "--metric")) {
			derived[nderived++] = val;
			i++;
		} else if (!strncmp(arg, "--metric=", 9)) {
			derived[nderived++] = arg + 9;
		} else if (!strcmp(arg, "-j")) {
			char *end;
			long n = strtol(val, &end, 10);
			if (*end || end == val || n < 1 || n > 64) {
				cli_error("analyze",
					  "-j takes a number of threads from 1 to 64, not '%s'",
					  val);
				goto done;
			}
			jobs = (int)n;
			i++;
		} else if (!strcmp(arg, "-q") || !strcmp(arg, "--quiet")) {
			quiet = 1;
		} else if (arg[0] == '-' && arg[1]) {
			cli_error("analyze", "unknown option %s (see callpath analyze --help)",
				  arg);
			goto done;
		} else if (dir) {
			cli_error("analyze", "one measurement directory only (got %s and %s)", dir,
				  arg);
			goto done;
		} else {
			dir = arg;
		}
	}
	if (!dir) {
		usage(stderr);
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
	o.jobs = jobs;
	o.progress = quiet ? NULL : stderr;
	o.derived = derived;
	o.nderived = nderived;
	double t0 = now_s();
	struct cp_db db;
	int rc = cp_analyze_dir(dir, &o, &db);
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
	free(derived);
	return status;
}
