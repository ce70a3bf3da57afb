/* callpath probe -f PATTERN... [-e EVENT] [-o DIR] [-q] [--list] [--] PROGRAM [ARGS...]
 *
 * Entry/exit probes on the functions matching the patterns (docs/cmd-probe.md): the
 * patterns go to the runtime in CALLPATH_PROBES (cp_record_opts.probes), which patches the
 * matching functions of every load module; the run is cp_record_run()'s, as for `callpath
 * record` (same measurement directory, same summary), with sampling only when -e is given. */
#include "cli/cli.h"
#include "base/error.h"
#include "patch/patch.h"
#include "patch/select.h"
#include "record/control.h"
#include "record/record.h"
#include "analyze/elf/procs.h"
#include "analyze/module.h"
#include "search/loops.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PROBE_MAX_PATTERNS 64

struct list_ctx {
	const char *patterns[PROBE_MAX_PATTERNS];
	int npatterns;
	int matches, refused;
	uint64_t seen[4096]; /* addresses listed in the current module (aliases once) */
	int nseen;
};

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

/* One listed function (aliases once), with the runtime's checks on the file's bytes. */
static void list_one(struct list_ctx *c, const char *path, const struct cp_patch_elf *e,
		     const struct cp_patch_func *fn, struct cp_patch_name *name)
{
	for (int k = 0; k < c->nseen; k++)
		if (c->seen[k] == fn->sym->st_value)
			return;
	if (c->nseen < (int)(sizeof c->seen / sizeof c->seen[0]))
		c->seen[c->nseen++] = fn->sym->st_value;
	int st = cp_patch_check_file(e, fn);
	const char *demangled = name ? cp_patch_name_demangled(name) : NULL;
	printf("%s\t%s\t0x%llx\t%llu\t%s%s\t%s\n", base_name(path), fn->name,
	       (unsigned long long)fn->sym->st_value, (unsigned long long)fn->sym->st_size,
	       st ? "refused: " : "probe", st ? cp_patch_status_str(st) : "",
	       demangled ? demangled : "-");
	c->matches++;
	c->refused += st != 0;
}

/* The size of the function without symbol at vaddr: its FDE's, as the analyzer (struct,
 * report) reads it for its sub_HEX procedure; 0 when no FDE starts there. */
static uint64_t unnamed_size(const char *path, uint64_t vaddr)
{
	struct cp_module m;
	uint64_t size = 0;
	if (cp_module_open(&m, path, 0)) {
		cp_error_clear();
		return 0;
	}
	for (size_t i = 0; i < m.procs.nprocs; i++)
		if ((m.procs.procs[i].flags & CP_PROC_FDE) && m.procs.procs[i].lo == vaddr)
			size = m.procs.procs[i].hi - vaddr;
	cp_module_release(&m);
	return size;
}

/* sub_HEX patterns (select.h): as the runtime matches them, the size from the analyzer. */
static void list_unnamed(struct list_ctx *c, const char *path, const struct cp_patch_elf *e)
{
	for (int i = 0; i < c->npatterns; i++) {
		char name[32];
		uint64_t vaddr;
		int qualified;
		Elf64_Sym sym;
		struct cp_patch_func fn;
		if (!cp_patch_pattern_unnamed(c->patterns[i], path, &vaddr, &qualified) ||
		    cp_patch_elf_unnamed(e, vaddr, unnamed_size(path, vaddr), name, &sym, &fn))
			continue;
		if (sym.st_size || qualified)
			list_one(c, path, e, &fn, NULL);
	}
}

/* The runtime's matching and checks (src/patch/select.h), on the file's bytes. */
static void list_module(struct list_ctx *c, const char *path)
{
	static struct cp_patch_name name;
	struct cp_patch_elf e;
	struct cp_patch_elf_iter it;
	struct cp_patch_func fn;
	if (cp_patch_module_skipped(path) || cp_patch_elf_map(&e, path))
		return;
	c->nseen = 0;
	cp_patch_elf_iter_init(&it);
	while (cp_patch_elf_next(&e, &it, &fn)) {
		int selected = 0;
		cp_patch_name_init(&name, fn.name);
		for (int i = 0; i < c->npatterns && !selected; i++)
			selected = cp_patch_pattern_match(c->patterns[i], path, &name) != 0;
		if (selected)
			list_one(c, path, &e, &fn, &name);
	}
	list_unnamed(c, path, &e);
	cp_patch_elf_unmap(&e);
}

/* The executable, then the libraries the dynamic loader would map for it (its
 * LD_TRACE_LOADED_OBJECTS listing, what ldd prints; the program itself does not run). */
static int probe_list(struct list_ctx *c, const char *prog)
{
	char cmd[PATH_MAX + 64], line[PATH_MAX + 64];
	if (access(prog, R_OK)) {
		cli_error("probe", "cannot read '%s': %s", prog, strerror(errno));
		return CLI_EXIT_FAILURE;
	}
	printf("module\tfunction\taddress\tsize\tstatus\tdemangled\n");
	list_module(c, prog);
	if (!strchr(prog, '\'')) {
		snprintf(cmd, sizeof cmd, "LD_TRACE_LOADED_OBJECTS=1 '%s' 2>/dev/null", prog);
		FILE *p = popen(cmd, "r");
		while (p && fgets(line, sizeof line, p)) {
			char *arrow = strstr(line, "=> "), *path = arrow ? arrow + 3 : line;
			path += strspn(path, " \t");
			if (*path != '/')
				continue;
			path[strcspn(path, " \t\n(")] = 0;
			list_module(c, path);
		}
		if (p)
			pclose(p);
	}
	fprintf(stderr,
		"callpath probe: %d function(s) match, %d refused (libraries loaded "
		"later with dlopen are not listed)\n",
		c->matches, c->refused);
	return c->matches ? 0 : 1;
}

/* --pid: the requests, in the order given ('a' add, 'r' remove). */
struct pid_ctx {
	int pid;
	const char *dir;
	int n;
	char kind[4096];
	const char *pattern[4096];
};

static int pid_push(struct pid_ctx *p, int kind, const char *pattern)
{
	if (p->n == (int)(sizeof p->kind)) {
		cli_error("probe", "too many --add/--remove (at most %d per call)", p->n);
		return -1;
	}
	p->kind[p->n] = (char)kind;
	p->pattern[p->n++] = pattern;
	return 0;
}

/* The symbols --add-loops FUNC names in the module at path: FUNC itself if it is there,
 * else its GCC clones (FUNC.constprop.0...). Returns how many (at most max, strdup'ed). */
static int loop_targets(const char *path, const char *func, char **out, int max)
{
	struct cp_module m;
	int n = 0;
	if (cp_module_open(&m, path, 0))
		return 0;
	size_t flen = strlen(func);
	for (size_t i = 0; i < m.procs.nprocs && n < max; i++) {
		const char *s =
		    m.procs.procs[i].linkage ? m.procs.procs[i].linkage : m.procs.procs[i].name;
		if (!strcmp(s, func)) {
			while (n)
				free(out[--n]);
			out[n++] = strdup(s);
			break;
		}
		if (cp_patch_clone_base_len(s) == flen && !strncmp(s, func, flen))
			out[n++] = strdup(s);
	}
	cp_module_release(&m);
	return n;
}

static int plan_loops(struct cp_control *ctl, const char *exe, const char *func)
{
	char reply[CP_CONTROL_REPLY_MAX];
	struct cp_loop_plan plan;
	cp_loop_plan_init(&plan);
	int rc = cp_loop_plan_make(&plan, exe, func);
	if (!rc)
		rc = cp_control_request_long(ctl, "loops", plan.request.buf + 0, reply,
					     sizeof reply, 30);
	if (!rc) {
		int nl = 0, ne = 0;
		sscanf(reply, "%d\t%d", &nl, &ne);
		printf("loops %s: %d loops, %d edges instrumented\n", func, nl, ne);
		if (plan.notes.len)
			printf("%s", plan.notes.buf);
	}
	cp_loop_plan_release(&plan);
	return rc;
}

/* --loops [MODULE-PATH:]FUNC: the function probed, then its loops (search/loops.h); FUNC
 * names its GCC clones too. */
static int probe_loops(struct cp_control *ctl, const char *spec)
{
	char exe[PATH_MAX], link[64], reply[CP_CONTROL_REPLY_MAX], pattern[PATH_MAX + 256];
	const char *colon = strrchr(spec, ':'), *func = colon ? colon + 1 : spec;
	snprintf(link, sizeof link, "/proc/%d/exe", ctl->pid);
	if (colon)
		snprintf(exe, sizeof exe, "%.*s", (int)(colon - spec), spec);
	else if (!realpath(link, exe))
		return cp_error(CP_ENOENT, "cannot read %s", link);
	const char *base = strrchr(exe, '/') ? strrchr(exe, '/') + 1 : exe;
	snprintf(pattern, sizeof pattern, "%s:%s", base, func);
	int rc = cp_control_request(ctl, "add", pattern, reply, sizeof reply, 30), n = 0, r = 0;
	if (rc)
		return rc;
	sscanf(reply, "%d\t%d", &n, &r);
	if (r && !n) /* probed already answers 0, 0 */
		return cp_error(CP_EINVAL, "%s cannot be probed: %s", func,
				strchr(reply, ':') ? strchr(reply, ':') + 2 : reply);
	char *names[16];
	int nn = loop_targets(exe, func, names, 16);
	if (!nn)
		return plan_loops(ctl, exe, func); /* its error */
	for (int i = 0; i < nn; i++) {
		if (!rc)
			rc = plan_loops(ctl, exe, names[i]);
		free(names[i]);
	}
	return rc;
}

/* One line per request on stdout: "add PATTERN: N probed, R refused[: REASON]" or
 * "remove PATTERN: N restored". Exit 1 when the process refused a request. */
static int probe_pid(const struct pid_ctx *p)
{
	struct cp_control ctl;
	char reply[CP_CONTROL_REPLY_MAX];
	int failed = 0;
	if (cp_control_open(&ctl, p->pid, p->dir)) {
		cli_error("probe", "%s", cp_error_message());
		return CLI_EXIT_FAILURE;
	}
	for (int i = 0; i < p->n; i++) {
		const char *verb = p->kind[i] == 'a'   ? "add"
				   : p->kind[i] == 'l' ? "loops"
						       : "remove";
		int rc = p->kind[i] == 'l' ? probe_loops(&ctl, p->pattern[i])
					   : cp_control_request(&ctl, verb, p->pattern[i], reply,
								sizeof reply, 30);
		if (!rc && p->kind[i] == 'l')
			continue;
		if (rc == CP_EINVAL) {
			cli_error("probe", "%s '%s': %s", verb, p->pattern[i], cp_error_message());
			failed = 1;
			continue;
		}
		if (rc) {
			cli_error("probe", "%s", cp_error_message());
			cp_control_close(&ctl);
			return CLI_EXIT_FAILURE;
		}
		int n = 0, refused = 0, used = 0;
		sscanf(reply, "%d\t%d%n", &n, &refused, &used);
		if (p->kind[i] == 'a')
			printf("add %s: %d probed, %d refused%s%s\n", p->pattern[i], n, refused,
			       refused ? ": " : "", refused ? reply + used + 1 : "");
		else
			printf("remove %s: %d restored\n", p->pattern[i], n);
	}
	fflush(stdout);
	cp_control_close(&ctl);
	return failed;
}

static void probe_usage(FILE *out)
{
	fprintf(
	    out,
	    "usage: callpath probe -f PATTERN [-f PATTERN...] [options] [--] PROGRAM [ARGS...]\n"
	    "       callpath probe --pid PID [--add PATTERN]... [--remove PATTERN]...\n"
	    "                      [--add-loops FUNC]... [-o DIR]\n"
	    "\n"
	    "Counts the calls of the matching functions and measures their wall time (TSC),\n"
	    "per calling context, in the executable and every shared library (also those\n"
	    "loaded later with dlopen). No recompiling: function entries are patched at run\n"
	    "time.\n"
	    "\n"
	    "  -f, --function PATTERN  glob over symbol names ('work', 'MPI_*'), C++ names\n"
	    "                          mangled or demangled ('ns::Klass::*'), or\n"
	    "                          MODULE:GLOB to restrict it to load modules whose file\n"
	    "                          name matches MODULE ('libfoo.so*:init'); repeatable\n"
	    "  -m, --metric METRIC     also measure METRIC per probed call: cputime (exclusive\n"
	    "                          thread CPU time; costs two system calls per call)\n"
	    "  --select F              measure only while a function matching F is active\n"
	    "                          (F is probed too); repeatable\n"
	    "  --filter F              measure nothing inside the activations of functions\n"
	    "                          matching F (F itself is measured); repeatable\n"
	    "  -e, --event EVENT       also sample EVENT (as callpath record -e); repeatable\n"
	    "  -o, --output DIR        measurement directory\n"
	    "  -q, --quiet             no summary at the end\n"
	    "  --pid PID               change the probes of process PID, running under\n"
	    "                          callpath probe or callpath record --control (its\n"
	    "                          measurement directory: -o DIR, else its environment)\n"
	    "  --add PATTERN           with --pid: probe the functions matching PATTERN\n"
	    "  --remove PATTERN        with --pid: remove the probes of those functions\n"
	    "  --add-loops [MODULE:]FUNC  with --pid: probe FUNC and its loops (iterations,\n"
	    "                          entries, time per loop); the program must run under\n"
	    "                          callpath probe --loops\n"
	    "  --loops                 let --add-loops instrument loops in this run (adds the\n"
	    "                          metrics loop-iterations, loop-entries, loop-time)\n"
	    "  -h, --help              this help\n"
	    "\n"
	    "Metrics: calls (entries), probe-time (ns, exclusive per probed activation; a\n"
	    "context's inclusive value is the probed function's inclusive wall time).\n"
	    "Functions that cannot be patched safely are listed as notes in the profile.\n");
}

/* -f, --select, --filter: one more item of CALLPATH_PROBES ("PAT", "+PAT", "-PAT"). */
static int probe_add_pattern(char *patterns, size_t cap, int kind, const char *pat,
			     struct list_ctx *lc)
{
	if (!*pat || strchr(pat, ';') || strchr("+-", *pat) ||
	    strlen(patterns) + strlen(pat) + 3 > cap) {
		cli_error("probe",
			  "bad pattern '%s' (empty, too long, contains ';' or starts with '+' "
			  "or '-')",
			  pat);
		return -1;
	}
	if (*patterns)
		strcat(patterns, ";");
	if (kind != 'f')
		strcat(patterns, kind == 'S' ? "+" : "-");
	strcat(patterns, pat);
	if (lc->npatterns < PROBE_MAX_PATTERNS)
		lc->patterns[lc->npatterns++] = pat;
	return 0;
}

int cmd_probe(int argc, char **argv)
{
	static const struct option longopts[] = {
	    {"function", required_argument, 0, 'f'},
	    {"event", required_argument, 0, 'e'},
	    {"output", required_argument, 0, 'o'},
	    {"quiet", no_argument, 0, 'q'},
	    {"select", required_argument, 0, 'S'},
	    {"filter", required_argument, 0, 'F'},
	    {"list", no_argument, 0, 'l'},
	    {"metric", required_argument, 0, 'm'},
	    {"help", no_argument, 0, 'h'},
	    {"pid", required_argument, 0, 'P'},
	    {"add", required_argument, 0, 'a'},
	    {"remove", required_argument, 0, 'r'},
	    {"add-loops", required_argument, 0, 'L'},
	    {"loops", no_argument, 0, 'O'},
	    {0, 0, 0, 0},
	};
	static struct pid_ctx pc;
	static char patterns[8192];
	static struct list_ctx lc;
	struct cp_record_opts o;
	int list = 0, quiet = 0, c;
	cp_record_opts_init(&o);
	o.name = "probe";
	optind = 1;
	while ((c = cli_getopt("probe", argc, argv, "+f:e:o:m:qlh", longopts)) != -1) {
		switch (c) {
		case 'f':
		case 'S':
		case 'F':
			if (probe_add_pattern(patterns, sizeof patterns, c, optarg, &lc))
				return CLI_EXIT_FAILURE;
			break;
		case 'l':
			list = 1;
			break;
		case 'P':
			pc.pid = atoi(optarg);
			if (pc.pid <= 0) {
				cli_error("probe", "bad process id '%s'", optarg);
				return CLI_EXIT_FAILURE;
			}
			break;
		case 'O':
			o.loops = 1;
			break;
		case 'L':
			c = 'l';
			/* fallthrough */
		case 'a':
		case 'r':
			if (pid_push(&pc, c, optarg))
				return CLI_EXIT_FAILURE;
			break;
		case 'm':
			if (strcmp(optarg, "cputime")) {
				cli_error("probe", "unknown metric '%s' (known: cputime)", optarg);
				return CLI_EXIT_FAILURE;
			}
			o.probe_metrics = "cputime";
			break;
		case 'e':
			if (cli_record_event("probe", &o, optarg))
				return CLI_EXIT_FAILURE;
			break;
		case 'o':
			o.outdir = optarg;
			break;
		case 'q':
			quiet = 1;
			break;
		case 'h':
			probe_usage(stdout);
			return 0;
		default: /* said by cli_getopt */
			return CLI_EXIT_FAILURE;
		}
	}
	if (pc.pid || pc.n) {
		if (!pc.pid || !pc.n || *patterns || optind < argc) {
			cli_error("probe", "--add, --remove and --add-loops go with --pid PID (and "
					   "no program or -f); see --help");
			return CLI_EXIT_FAILURE;
		}
		pc.dir = o.outdir;
		return probe_pid(&pc);
	}
	if (!*patterns) {
		cli_error("probe", "no function given: use -f PATTERN (see --help)");
		return CLI_EXIT_FAILURE;
	}
	if (optind >= argc) {
		cli_error("probe", "no program given; usage: callpath probe -f PATTERN [options] "
				   "[--] PROGRAM [ARGS...]");
		return CLI_EXIT_FAILURE;
	}
	if (list)
		return probe_list(&lc, argv[optind]);
	if (cli_record_events_check("probe", &o, quiet))
		return CLI_EXIT_FAILURE;
	o.probes = patterns;
	o.control = 1; /* probe --pid may add and remove probes while it runs */
	o.argv = argv + optind;
	return cli_record_run(&o, quiet, 0);
}
