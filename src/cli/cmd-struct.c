/* callpath struct: recover the static structure of binaries (docs/cmd-struct.md). */
#include "cli/cli.h"

#include "analyze/structure/cache.h"
#include "analyze/structure/dump.h"
#include "analyze/symbolize.h"
#include "base/atomic-file.h"
#include "base/error.h"
#include "base/xalloc.h"

#include <getopt.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct struct_args {
	const char **bins;
	int nbins;
	const char *output;
	int dump, json, flags;
	unsigned jobs;
	uint64_t *lookup, *symbolize;
	int nlookup, nsymbolize;
};

static void usage(FILE *out)
{
	fprintf(
	    out,
	    "usage: callpath struct BINARY... [-o FILE] [--dump] [--format text|json]\n"
	    "                       [--no-cache] [--no-loops] [-j N] [--lookup ADDR]... "
	    "[--symbolize ADDR]...\n\n"
	    "Recovers procedures, inlined code, loop nests and statements of executables and\n"
	    "shared libraries, and caches the result by build-id ($XDG_CACHE_HOME/callpath/"
	    "struct).\n\n"
	    "  -o, --output FILE  write the structure file to FILE (one BINARY only)\n"
	    "  --dump             print the scope tree (file > procedure > inlined > loop >\n"
	    "                     statement, with line ranges and address intervals)\n"
	    "  --format F         text (default) or json, for --dump and --lookup\n"
	    "  --no-cache         recompute even if a cached structure exists (and refresh it)\n"
	    "  --no-loops         skip control-flow and loop analysis (not cached)\n"
	    "  -j, --jobs N       threads for control-flow and loop analysis (default 1; the\n"
	    "                     result is the same for any N)\n"
	    "  --lookup ADDR      print the scope chain of an address (ELF virtual address)\n"
	    "  --symbolize ADDR   print the report's symbolization of an address\n");
}

static int parse_addr(const char *s, uint64_t **v, int *n)
{
	char *end;
	unsigned long long a = strtoull(s, &end, 0);
	if (!*s || *end)
		return -1;
	*v = xrealloc(*v, (size_t)(*n + 1) * sizeof(**v));
	(*v)[(*n)++] = a;
	return 0;
}

enum { OPT_DUMP = 256, OPT_NO_CACHE, OPT_NO_LOOPS, OPT_FORMAT, OPT_LOOKUP, OPT_SYMBOLIZE };

/* One option (getopt_long's c, optarg); 0, or -1 after the error (said). */
static int parse_opt(int c, const char *val, struct struct_args *a)
{
	char *end;
	unsigned long n;
	switch (c) {
	case 'o':
		a->output = val;
		return 0;
	case 'j':
		n = strtoul(val, &end, 10);
		if (*end || end == val || n < 1 || n > 64) {
			cli_error("struct", "-j takes a number of threads from 1 to 64, not '%s'",
				  val);
			return -1;
		}
		a->jobs = (unsigned)n;
		return 0;
	case OPT_DUMP:
		a->dump = 1;
		return 0;
	case OPT_NO_CACHE:
		a->flags |= CP_STRUCT_NO_CACHE;
		return 0;
	case OPT_NO_LOOPS:
		a->flags |= CP_STRUCT_NO_LOOPS;
		return 0;
	case OPT_FORMAT:
		if (strcmp(val, "text") && strcmp(val, "json")) {
			cli_error("struct", "--format must be text or json, not '%s'", val);
			return -1;
		}
		a->json = !strcmp(val, "json");
		return 0;
	case OPT_LOOKUP:
	case OPT_SYMBOLIZE:
		if (parse_addr(val, c == OPT_SYMBOLIZE ? &a->symbolize : &a->lookup,
			       c == OPT_SYMBOLIZE ? &a->nsymbolize : &a->nlookup)) {
			cli_error("struct", "%s: '%s' is not an address",
				  c == OPT_SYMBOLIZE ? "--symbolize" : "--lookup", val);
			return -1;
		}
		return 0;
	default: /* said by cli_getopt */
		return -1;
	}
}

/* 0, 1 after --help, -1 after an error (said). */
static int parse_args(int argc, char **argv, struct struct_args *a)
{
	static const struct option longopts[] = {
	    {"output", required_argument, 0, 'o'},
	    {"jobs", required_argument, 0, 'j'},
	    {"dump", no_argument, 0, OPT_DUMP},
	    {"no-cache", no_argument, 0, OPT_NO_CACHE},
	    {"no-loops", no_argument, 0, OPT_NO_LOOPS},
	    {"format", required_argument, 0, OPT_FORMAT},
	    {"lookup", required_argument, 0, OPT_LOOKUP},
	    {"symbolize", required_argument, 0, OPT_SYMBOLIZE},
	    {"help", no_argument, 0, 'h'},
	    {0, 0, 0, 0},
	};
	int c;
	optind = 1;
	while ((c = cli_getopt("struct", argc, argv, "o:j:h", longopts)) != -1) {
		if (c == 'h') {
			usage(stdout);
			return 1;
		}
		if (parse_opt(c, optarg, a))
			return -1;
	}
	a->bins = xcalloc((size_t)argc + 1, sizeof(*a->bins));
	while (optind < argc)
		a->bins[a->nbins++] = argv[optind++];
	if (!a->nbins) {
		cli_error("struct", "no BINARY given (see --help)");
		return -1;
	}
	if (a->output && a->nbins != 1) {
		cli_error("struct", "-o FILE takes exactly one BINARY (%d given)", a->nbins);
		return -1;
	}
	return 0;
}

struct progress {
	const char *name;
	int shown;
};

static void show_progress(void *ctx, size_t done, size_t total)
{
	struct progress *p = ctx;
	if (total < 2048)
		return;
	fprintf(stderr, "\rcallpath struct: %s: %zu/%zu procedures", p->name, done, total);
	p->shown = 1;
}

static void print_symbolized(struct cp_symbolizer *sym, const char *bin, uint64_t addr)
{
	struct cp_sym_info info;
	if (cp_symbolizer_lookup(sym, bin, NULL, 0, addr, 0, &info)) {
		cli_error("struct", NULL);
		return;
	}
	printf("0x%llx\tprocedure:%s@%s:%d", (unsigned long long)addr,
	       info.found ? info.procedure : "??", info.file ? info.file : "??", info.line);
	for (int i = 0; i < info.ninline; i++)
		printf("\tinline:%s@%s:%d", info.inline_frames[i].name,
		       info.inline_frames[i].file ? info.inline_frames[i].file : "??",
		       info.inline_frames[i].line);
	printf("\n");
}

static int obtain(const struct struct_args *a, const char *bin, struct cp_structure *st)
{
	struct progress pg = {bin, 0};
	struct cp_struct_options opt = {0};
	/* default 1: on the shared 2-CPU machine measured, -j 2 was no faster (bench/RESULTS.md) */
	opt.jobs = a->jobs ? a->jobs : 1;
	if (isatty(STDERR_FILENO)) {
		opt.progress = show_progress;
		opt.progress_ctx = &pg;
	}
	int rc;
	const char *where = a->output;
	struct cp_struct_result res = {0};
	if (a->output) {
		void *buf = NULL;
		size_t len = 0;
		rc = cp_struct_build(bin, a->flags, &opt, &buf, &len);
		if (!rc)
			rc = cp_write_file_atomic(a->output, buf, len, 0);
		if (!rc)
			rc = cp_structure_adopt(st, buf, len, a->output);
		else
			free(buf);
	} else {
		rc = cp_struct_get(bin, a->flags, &opt, st, &res);
		where = res.cache_path ? res.cache_path : "not cached";
		if (res.cache_warning)
			fprintf(stderr,
				"callpath struct: warning: %s (the structure is not cached)\n",
				res.cache_warning);
	}
	if (pg.shown)
		fputc('\n', stderr);
	if (!rc && !a->dump && !a->nlookup && !a->nsymbolize)
		printf("%s: %u procedures, %u loops, %u scopes, %u ranges (%s%s)\n", bin,
		       st->hdr->nprocs, st->hdr->nloops, st->hdr->nscopes, st->hdr->nranges,
		       res.from_cache ? "cached: " : "", where);
	cp_struct_result_release(&res);
	return rc;
}

static int process(const struct struct_args *a, const char *bin, struct cp_symbolizer *sym)
{
	struct cp_structure st;
	if (a->nlookup || a->dump || a->output || !a->nsymbolize) {
		if (obtain(a, bin, &st)) {
			cli_error("struct", NULL);
			return -1;
		}
		if (a->dump && a->json)
			cp_struct_dump_json(&st, stdout);
		else if (a->dump)
			cp_struct_dump_text(&st, stdout);
		for (int i = 0; i < a->nlookup; i++)
			cp_struct_print_lookup(&st, a->lookup[i], a->json, stdout);
		cp_structure_release(&st);
	}
	for (int i = 0; i < a->nsymbolize; i++)
		print_symbolized(sym, bin, a->symbolize[i]);
	return 0;
}

int cmd_struct(int argc, char **argv)
{
	struct struct_args a = {0};
	int status = 0;
	/* Blocks of 1 MB and more in their own mappings, always (glibc raises this threshold
	 * as big blocks are freed, then grows the big tables inside the heap by copying and
	 * keeps the holes): peak RSS of libclang-cpp.so.14 128 -> 110 MB, same output. */
	mallopt(M_MMAP_THRESHOLD, 1 << 20);
	int rc = parse_args(argc, argv, &a);
	if (rc) {
		status = rc > 0 ? 0 : CLI_EXIT_FAILURE;
		goto out;
	}
	struct cp_symbolizer *sym = cp_symbolizer_new();
	for (int i = 0; i < a.nbins; i++)
		if (process(&a, a.bins[i], sym))
			status = CLI_EXIT_FAILURE;
	cp_symbolizer_free(sym);
out:
	free(a.bins);
	free(a.lookup);
	free(a.symbolize);
	return status;
}
