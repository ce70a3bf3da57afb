/* callpath gprof [-o FILE] [-d DIR] [--] PROGRAM [ARGS...]
 *
 * gprof without recompiling (docs/cmd-gprof.md): runs PROGRAM under `callpath probe` with
 * every function of the executable probed (exact call arcs: the call site of each probed
 * call -> the callee's entry) and CPU-time sampling (the PC histogram), then writes a
 * gmon.out that GNU gprof reads: `gprof PROGRAM gmon.out`, through the export module's
 * gmon writer (src/export/gmon.h). The arcs come from the measurement itself: each probed
 * call's PC node under the CALL node of its call site gives gprof's (frompc, selfpc). */
#include "cli/cli.h"
#include "base/error.h"
#include "export/gmon.h"
#include "format/measure-read.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define GPROF_MAX_ARGS 64

struct gprof_data {
	struct cp_gmon gmon; /* histogram over the executable's text, arcs */
	int started;
	uint64_t period; /* cputime sampling period, ns */
};

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

/* The program's real path (what the runtime reports as the executable module). */
static int resolve_program(const char *prog, char *out)
{
	char buf[PATH_MAX];
	if (strchr(prog, '/'))
		return realpath(prog, out) ? 0 : -1;
	const char *path = getenv("PATH");
	for (const char *p = path ? path : "/usr/bin:/bin"; *p;) {
		size_t n = strcspn(p, ":");
		snprintf(buf, sizeof buf, "%.*s/%s", (int)(n ? n : 1), n ? p : ".", prog);
		if (!access(buf, X_OK) && realpath(buf, out))
			return 0;
		p += n + (p[n] == ':');
	}
	return -1;
}

static int metric_index(const struct cp_mf_proc *p, const char *name)
{
	for (uint32_t i = 0; i < p->hdr.nmetrics; i++)
		if (!strcmp(p->hdr.metrics[i].name, name))
			return (int)i;
	return -1;
}

/* Arcs (a probed function's PC node under the node of its call site, both in the
 * executable) and histogram (cputime at PC nodes of the executable) of one image. */
static void collect_image(struct gprof_data *g, const struct cp_mf_image *im, const char *exe)
{
	const struct cp_mf_proc *p = &im->proc;
	long exe_idx = -1;
	for (size_t i = 0; i < p->nmodules && exe_idx < 0; i++)
		if (p->modules[i].path && !strcmp(p->modules[i].path, exe))
			exe_idx = (long)i;
	int calls = metric_index(p, "calls"), cpu = metric_index(p, "cputime");
	if (exe_idx < 0 || calls < 0)
		return;
	const struct cp_mf_module_info *m = &p->modules[exe_idx];
	if (!g->started) {
		cp_gmon_init(&g->gmon, (m->text_lo - m->bias) & ~(uint64_t)3, m->text_hi - m->bias,
			     4);
		g->period = cpu >= 0 ? p->hdr.metrics[cpu].period : 0;
		g->started = 1;
	}
	for (size_t t = 0; t < im->nthreads; t++) {
		const struct cp_mf_thr *th = &im->threads[t];
		uint32_t nm = th->hdr.nmetrics;
		for (size_t i = 0; i < th->nnodes; i++) {
			const struct cp_mf_rnode *n = &th->nodes[i];
			if (n->kind != CP_MF_NODE_PC || n->module != m->id)
				continue;
			const uint64_t *v = th->values + i * nm;
			if (cpu >= 0 && v[cpu])
				cp_gmon_hist_add(&g->gmon, n->offset, (double)v[cpu] / 1e9);
			if (!v[calls] || n->parent >= th->nnodes)
				continue;
			const struct cp_mf_rnode *site = &th->nodes[n->parent];
			/* gprof's mcount drops arcs from outside the executable too */
			if (site->kind == CP_MF_NODE_CALL && site->module == m->id)
				cp_gmon_arc_add(&g->gmon, site->offset, n->offset, v[calls]);
		}
	}
}

static int write_gmon(const struct gprof_data *g, const char *path)
{
	FILE *f = fopen(path, "wb");
	if (!f) {
		cli_error("gprof", "cannot write %s: %s", path, strerror(errno));
		return -1;
	}
	uint32_t rate = g->period ? (uint32_t)(1000000000ull / g->period) : 1000;
	int rc = cp_gmon_write(&g->gmon, rate ? rate : 1, f);
	if (fclose(f) && !rc)
		rc = cp_error(CP_EIO, "cannot write %s: %s", path, strerror(errno));
	if (rc)
		cli_error("gprof", NULL);
	return rc ? -1 : 0;
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

int cmd_gprof(int argc, char **argv)
{
	static const struct option longopts[] = {
	    {"output", required_argument, 0, 'o'},
	    {"dir", required_argument, 0, 'd'},
	    {"help", no_argument, 0, 'h'},
	    {0, 0, 0, 0},
	};
	const char *out = "gmon.out", *keep = NULL;
	char exe[PATH_MAX], pattern[PATH_MAX + 8], tmp[] = "/tmp/callpath-gprof-XXXXXX";
	char *pargv[GPROF_MAX_ARGS + 16];
	int c, pargc = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "+o:d:h", longopts, NULL)) != -1) {
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
		default:
			fprintf(stderr, "Run 'callpath gprof --help' for the options.\n");
			return CLI_EXIT_FAILURE;
		}
	}
	if (optind >= argc) {
		cli_error("gprof",
			  "no program given; usage: callpath gprof [--] PROGRAM [ARGS...]");
		return CLI_EXIT_FAILURE;
	}
	if (argc - optind > GPROF_MAX_ARGS) {
		cli_error("gprof", "too many program arguments");
		return CLI_EXIT_FAILURE;
	}
	if (resolve_program(argv[optind], exe)) {
		cli_error("gprof", "cannot run '%s': not found or not executable", argv[optind]);
		return 127;
	}
	const char *dir = keep;
	if (!dir && !(dir = mkdtemp(tmp))) {
		cli_error("gprof", "cannot create a temporary directory: %s", strerror(errno));
		return CLI_EXIT_FAILURE;
	}
	const char *base = strrchr(exe, '/') ? strrchr(exe, '/') + 1 : exe;
	snprintf(pattern, sizeof pattern, "%s:*", base);
	char *fixed[] = {"probe", "-q", "-o", (char *)dir, "-f", pattern, "-e", "cputime", "--"};
	for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
		pargv[pargc++] = fixed[i];
	for (int i = optind; i < argc; i++)
		pargv[pargc++] = argv[i];
	pargv[pargc] = NULL;
	const char *prog = argv[optind]; /* cmd_probe resets optind */
	int status = cmd_probe(pargc, pargv);

	struct cp_mf_dir d;
	struct gprof_data g;
	memset(&g, 0, sizeof g);
	if (cp_mf_dir_open(&d, dir)) {
		cli_error("gprof", NULL);
		status = status ? status : CLI_EXIT_FAILURE;
	} else {
		for (size_t i = 0; i < d.nimages; i++)
			collect_image(&g, &d.images[i], exe);
		cp_mf_dir_release(&d);
		if (!g.started) {
			cli_error("gprof", "no profile of %s was recorded", exe);
			status = status ? status : CLI_EXIT_FAILURE;
		} else if (write_gmon(&g, out)) {
			status = status ? status : CLI_EXIT_FAILURE;
		} else {
			fprintf(stderr,
				"callpath gprof: wrote %s (%zu arcs); read it with: gprof %s %s\n",
				out, g.gmon.narcs, prog, out);
		}
	}
	cp_gmon_release(&g.gmon);
	if (!keep)
		remove_dir(dir);
	return status;
}
