/* callpath probe -f PATTERN... [-e EVENT] [-o DIR] [-q] [--list] [--] PROGRAM [ARGS...]
 *
 * Entry/exit probes on the functions matching the patterns (docs/cmd-probe.md): the
 * patterns go to the runtime in CALLPATH_PROBES, which patches the matching functions of
 * every load module; the run itself is `callpath record`'s (same measurement directory,
 * same summary), with sampling only when -e is given. */
#include "cli/cli.h"
#include "patch/patch.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define PROBE_MAX_ARGS 64
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

/* The runtime's matching (src/runtime/probe/install.c): GLOB or MODULE:GLOB. */
static int list_selected(const struct list_ctx *c, const char *path, const char *name)
{
	for (int i = 0; i < c->npatterns; i++) {
		const char *pat = c->patterns[i], *colon = strchr(pat, ':');
		if (colon) {
			char mod[256];
			size_t n = (size_t)(colon - pat);
			if (n >= sizeof mod)
				continue;
			memcpy(mod, pat, n);
			mod[n] = 0;
			if (fnmatch(mod, base_name(path), 0))
				continue;
			pat = colon + 1;
		}
		if (!fnmatch(pat, name, 0))
			return 1;
	}
	return 0;
}

/* The checks the runtime makes, on the file's bytes. */
static int list_status(const uint8_t *f, size_t size, const Elf64_Shdr *sec, const char *secname,
		       const Elf64_Sym *s)
{
	int st = cp_patch_check_symbol(ELF64_ST_TYPE(s->st_info), s->st_size, secname,
				       (sec->sh_flags & SHF_EXECINSTR) != 0);
	if (st)
		return st;
	if (sec->sh_type == SHT_NOBITS || s->st_value < sec->sh_addr ||
	    s->st_value + s->st_size > sec->sh_addr + sec->sh_size ||
	    sec->sh_offset + sec->sh_size > size)
		return CP_PATCH_NOT_EXEC;
	struct cp_patch_plan plan;
	return cp_patch_plan(f + sec->sh_offset + (s->st_value - sec->sh_addr), s->st_size,
			     s->st_value, &plan);
}

static void list_symtab(struct list_ctx *c, const char *path, const uint8_t *f, size_t size,
			const Elf64_Shdr *sh, unsigned nsec, const Elf64_Shdr *tab,
			const char *shstr)
{
	if (tab->sh_link >= nsec || tab->sh_entsize != sizeof(Elf64_Sym) ||
	    tab->sh_offset + tab->sh_size > size)
		return;
	const Elf64_Shdr *strs = &sh[tab->sh_link];
	if (!strs->sh_size || strs->sh_offset > size || strs->sh_size > size - strs->sh_offset ||
	    f[strs->sh_offset + strs->sh_size - 1] != 0)
		return;
	const char *str = (const char *)f + strs->sh_offset;
	const Elf64_Sym *sym = (const Elf64_Sym *)(f + tab->sh_offset);
	for (size_t i = 1; i < tab->sh_size / sizeof(Elf64_Sym); i++) {
		unsigned type = ELF64_ST_TYPE(sym[i].st_info);
		if ((type != STT_FUNC && type != STT_GNU_IFUNC) || sym[i].st_shndx == SHN_UNDEF ||
		    sym[i].st_shndx >= nsec || sym[i].st_name >= strs->sh_size)
			continue;
		const char *name = str + sym[i].st_name;
		if (!list_selected(c, path, name))
			continue;
		int dup = 0;
		for (int k = 0; k < c->nseen && !dup; k++)
			dup = c->seen[k] == sym[i].st_value;
		if (dup)
			continue;
		if (c->nseen < (int)(sizeof c->seen / sizeof c->seen[0]))
			c->seen[c->nseen++] = sym[i].st_value;
		const Elf64_Shdr *sec = &sh[sym[i].st_shndx];
		const char *secname = shstr ? shstr + sec->sh_name : NULL;
		int st = cp_patch_check_name(name);
		if (!st)
			st = list_status(f, size, sec, secname, &sym[i]);
		printf("%s\t%s\t0x%llx\t%llu\t%s%s\n", base_name(path), name,
		       (unsigned long long)sym[i].st_value, (unsigned long long)sym[i].st_size,
		       st ? "refused: " : "probe", st ? cp_patch_status_str(st) : "");
		c->matches++;
		c->refused += st != 0;
	}
}

static void list_module(struct list_ctx *c, const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat sb;
	if (fd < 0 || fstat(fd, &sb) || sb.st_size < (off_t)sizeof(Elf64_Ehdr)) {
		if (fd >= 0)
			close(fd);
		return;
	}
	size_t size = (size_t)sb.st_size;
	const uint8_t *f = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (f == MAP_FAILED)
		return;
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)f;
	c->nseen = 0;
	if (!memcmp(eh->e_ident, ELFMAG, SELFMAG) && eh->e_ident[EI_CLASS] == ELFCLASS64 &&
	    eh->e_shentsize == sizeof(Elf64_Shdr) &&
	    eh->e_shoff + (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr) <= size) {
		const Elf64_Shdr *sh = (const Elf64_Shdr *)(f + eh->e_shoff);
		const char *shstr = NULL;
		if (eh->e_shstrndx <
		    eh->e_shnum) { /* section names, NUL-terminated, all in bounds */
			const Elf64_Shdr *ss = &sh[eh->e_shstrndx];
			int ok = ss->sh_size && ss->sh_offset + ss->sh_size <= size &&
				 f[ss->sh_offset + ss->sh_size - 1] == 0;
			for (unsigned i = 0; ok && i < eh->e_shnum; i++)
				ok = sh[i].sh_name < ss->sh_size;
			if (ok)
				shstr = (const char *)f + ss->sh_offset;
		}
		for (int pass = 0; pass < 2; pass++)
			for (unsigned i = 0; i < eh->e_shnum; i++)
				if (sh[i].sh_type == (pass ? SHT_DYNSYM : SHT_SYMTAB))
					list_symtab(c, path, f, size, sh, eh->e_shnum, &sh[i],
						    shstr);
	}
	munmap((void *)f, size);
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
	printf("module\tfunction\taddress\tsize\tstatus\n");
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

static void probe_usage(FILE *out)
{
	fprintf(
	    out,
	    "usage: callpath probe -f PATTERN [-f PATTERN...] [options] [--] PROGRAM [ARGS...]\n"
	    "\n"
	    "Counts the calls of the matching functions and measures their wall time (TSC),\n"
	    "per calling context, in the executable and every shared library (also those\n"
	    "loaded later with dlopen). No recompiling: function entries are patched at run\n"
	    "time.\n"
	    "\n"
	    "  -f, --function PATTERN  glob over symbol names ('work', 'MPI_*'), or\n"
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
	    "  -h, --help              this help\n"
	    "\n"
	    "Metrics: calls (entries), probe-time (ns, exclusive per probed activation; a\n"
	    "context's inclusive value is the probed function's inclusive wall time).\n"
	    "Functions that cannot be patched safely are listed as notes in the profile.\n");
}

int cmd_probe(int argc, char **argv)
{
	static const struct option longopts[] = {
	    {"function", required_argument, 0, 'f'}, {"event", required_argument, 0, 'e'},
	    {"output", required_argument, 0, 'o'},   {"quiet", no_argument, 0, 'q'},
	    {"select", required_argument, 0, 'S'},   {"filter", required_argument, 0, 'F'},
	    {"list", no_argument, 0, 'l'},	     {"metric", required_argument, 0, 'm'},
	    {"help", no_argument, 0, 'h'},	     {0, 0, 0, 0},
	};
	char *rargv[PROBE_MAX_ARGS + 8];
	char patterns[8192] = "";
	int rargc = 0, nevents = 0, list = 0, c;
	static struct list_ctx lc;
	rargv[rargc++] = "record";
	optind = 1;
	while ((c = getopt_long(argc, argv, "+f:e:o:m:qlh", longopts, NULL)) != -1) {
		if (rargc >= PROBE_MAX_ARGS) {
			cli_error("probe", "too many options");
			return CLI_EXIT_FAILURE;
		}
		switch (c) {
		case 'f':
		case 'S':
		case 'F':
			if (!*optarg || strchr(optarg, ';') || strchr("+-", *optarg) ||
			    strlen(patterns) + strlen(optarg) + 3 > sizeof patterns) {
				cli_error(
				    "probe",
				    "bad pattern '%s' (empty, too long, contains ';' or starts "
				    "with '+' or '-')",
				    optarg);
				return CLI_EXIT_FAILURE;
			}
			if (*patterns)
				strcat(patterns, ";");
			if (c != 'f')
				strcat(patterns, c == 'S' ? "+" : "-");
			strcat(patterns, optarg);
			if (lc.npatterns < PROBE_MAX_PATTERNS)
				lc.patterns[lc.npatterns++] = optarg;
			break;
		case 'l':
			list = 1;
			break;
		case 'm':
			if (strcmp(optarg, "cputime")) {
				cli_error("probe", "unknown metric '%s' (known: cputime)", optarg);
				return CLI_EXIT_FAILURE;
			}
			setenv("CALLPATH_PROBE_METRICS", "cputime", 1);
			break;
		case 'e':
			rargv[rargc++] = "-e";
			rargv[rargc++] = optarg;
			nevents++;
			break;
		case 'o':
			rargv[rargc++] = "-o";
			rargv[rargc++] = optarg;
			break;
		case 'q':
			rargv[rargc++] = "-q";
			break;
		case 'h':
			probe_usage(stdout);
			return 0;
		default:
			fprintf(stderr, "Run 'callpath probe --help' for the options.\n");
			return CLI_EXIT_FAILURE;
		}
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
	if (argc - optind > PROBE_MAX_ARGS) {
		cli_error("probe", "too many program arguments");
		return CLI_EXIT_FAILURE;
	}
	rargv[rargc++] = "--";
	for (int i = optind; i < argc; i++)
		rargv[rargc++] = argv[i];
	rargv[rargc] = NULL;
	setenv("CALLPATH_PROBES", patterns, 1);
	setenv("CALLPATH_PROBE_ONLY", nevents ? "0" : "1", 1);
	return cmd_record(rargc, rargv);
}
