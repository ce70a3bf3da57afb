/* callpath gprof [-o FILE] [-d DIR] [--] PROGRAM [ARGS...]
 *
 * gprof without recompiling (docs/cmd-gprof.md): runs PROGRAM with cp_record_run() (as
 * `callpath probe` does) with every function of the executable probed (exact call arcs:
 * the call site of each probed call -> the callee's entry) and CPU-time sampling (the PC
 * histogram), then writes a gmon.out that GNU gprof reads: `gprof PROGRAM gmon.out`. The
 * arcs and the histogram come from the measurement (cp_gmon_from_measurement in
 * src/export/gmon.c). */
#include "cli/cli.h"
#include "base/error.h"
#include "export/gmon.h"
#include "record/record.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void gprof_usage(FILE *out)
{
	fprintf(
	    out,
	    "usage: callpath gprof [-o FILE] [-d DIR] [--] PROGRAM [ARGS...]\n"
	    "\n"
	    "Profiles PROGRAM as gprof does, without recompiling it with -pg: every function of\n"
	    "the executable is probed at run time (exact call counts per arc) and the program\n"
	    "counter is sampled on CPU time (flat profile). Writes FILE (default gmon.out) for\n"
	    "`gprof PROGRAM FILE`.\n"
	    "\n"
	    "  -o, --output FILE   the gmon.out to write (default ./gmon.out)\n"
	    "  -d, --dir DIR       keep the measurement directory in DIR (default: a temporary\n"
	    "                      directory, removed afterwards)\n"
	    "  -h, --help          this help\n");
}

static void remove_dir(const char *dir)
{
	char cmd[PATH_MAX + 16];
	if (strchr(dir, '\''))
		return;
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	if (system(cmd))
		cli_error("gprof", "could not remove %s", dir);
}

/* The program's run: every function of the executable probed, CPU time sampled. */
static int gprof_record(char **argv, const char *exe, const char *dir)
{
	char pattern[PATH_MAX + 8], runtime[PATH_MAX];
	struct cp_record_opts o;
	struct cp_record_result res;
	const char *base = strrchr(exe, '/') ? strrchr(exe, '/') + 1 : exe;
	snprintf(pattern, sizeof pattern, "%s:*", base);
	cp_record_opts_init(&o);
	o.name = "gprof";
	o.argv = argv;
	if (cli_record_runtime("gprof", &o, runtime, sizeof runtime))
		return CLI_EXIT_FAILURE;
	o.outdir = dir;
	o.probes = pattern;
	o.events[o.nevents++] = "cputime";
	int rc = cp_record_run(&o, &res);
	if (rc) {
		cli_error("gprof", NULL);
		return rc == CP_ECHILD ? 127 : CLI_EXIT_FAILURE;
	}
	if (res.signal)
		fprintf(stderr, "callpath gprof: %s was killed by signal %d (%s)\n", argv[0],
			res.signal, strsignal(res.signal));
	return res.status;
}

/* The gmon.out from the measurement in dir; 0 or -1 (said). */
static int gprof_write(const char *dir, const char *exe, const char *prog, const char *out)
{
	struct cp_gmon g;
	uint32_t rate = 0;
	int rc = cp_gmon_from_measurement(&g, dir, exe, &rate);
	if (!rc)
		rc = cp_gmon_write_file(&g, rate, out);
	if (rc)
		cli_error("gprof", NULL);
	else
		fprintf(stderr, "callpath gprof: wrote %s (%zu arcs); read it with: gprof %s %s\n",
			out, g.narcs, prog, out);
	cp_gmon_release(&g);
	return rc ? -1 : 0;
}

int cmd_gprof(int argc, char **argv)
{
	static const struct option longopts[] = {
	    {"output", required_argument, 0, 'o'},
	    {"dir", required_argument, 0, 'd'},
	    {"help", no_argument, 0, 'h'},
	    {0, 0, 0, 0},
	};
	const char *out = "gmon.out", *keep = NULL;
	char exe[PATH_MAX], tmp[] = "/tmp/callpath-gprof-XXXXXX";
	int c;
	optind = 1;
	while ((c = cli_getopt("gprof", argc, argv, "+o:d:h", longopts)) != -1) {
		switch (c) {
		case 'o':
			out = optarg;
			break;
		case 'd':
			keep = optarg;
			break;
		case 'h':
			gprof_usage(stdout);
			return 0;
		default: /* said by cli_getopt */
			return CLI_EXIT_FAILURE;
		}
	}
	if (optind >= argc) {
		cli_error("gprof",
			  "no program given; usage: callpath gprof [--] PROGRAM [ARGS...]");
		return CLI_EXIT_FAILURE;
	}
	if (cp_record_find_program(argv[optind], exe)) {
		cli_error("gprof", "cannot run '%s': not found or not executable", argv[optind]);
		return 127;
	}
	const char *dir = keep;
	if (!dir && !(dir = mkdtemp(tmp))) {
		cli_error("gprof", "cannot create a temporary directory: %s", strerror(errno));
		return CLI_EXIT_FAILURE;
	}
	int status = gprof_record(argv + optind, exe, dir);
	if (gprof_write(dir, exe, argv[optind], out) && !status)
		status = CLI_EXIT_FAILURE;
	if (!keep)
		remove_dir(dir);
	return status;
}
