#include "analyze/elf/procs.h"

#include "base/error.h"
#include "base/search.h"
#include "base/xalloc.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* libstdc++ (the C++ ABI demangler; cp_analyze links stdc++). */
extern char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

char *cp_demangle(const char *name)
{
	if (name[0] != '_' || name[1] != 'Z')
		return xstrdup(name);
	/* A suffix such as @plt or @GLIBCXX_3.4 is kept as is. */
	const char *at = strchr(name, '@');
	char *base = at ? xstrndup(name, (size_t)(at - name)) : NULL;
	int status = 0;
	char *d = __cxa_demangle(base ? base : name, NULL, NULL, &status);
	free(base);
	if (!d || status != 0) {
		free(d);
		return xstrdup(name);
	}
	if (at) {
		size_t n = strlen(d) + strlen(at) + 1;
		char *full = xmalloc(n);
		snprintf(full, n, "%s%s", d, at);
		free(d);
		d = full;
	}
	return d;
}

void cp_proc_table_init(struct cp_proc_table *t)
{
	memset(t, 0, sizeof(*t));
}

void cp_proc_table_release(struct cp_proc_table *t)
{
	for (size_t i = 0; i < t->nprocs; i++) {
		struct cp_proc *p = &t->procs[i];
		free(p->name);
		free(p->linkage);
		for (size_t j = 0; j < p->naliases; j++)
			free(p->aliases[j]);
		free(p->aliases);
		free(p->parts);
	}
	free(t->procs);
	free(t->ranges);
	cp_proc_table_init(t);
}

struct cand_vec {
	struct cp_sym_candidate *v;
	size_t n, alloc;
};

static void cand_push(struct cand_vec *cv, uint64_t lo, uint64_t size, const char *name,
		      uint32_t flags, uint32_t section)
{
	XGROW(cv->v, cv->n + 1, cv->alloc);
	struct cp_sym_candidate *c = &cv->v[cv->n++];
	c->lo = lo;
	c->size = size;
	c->name = xstrdup(name);
	c->flags = flags;
	c->section = section;
}

/* Hidden-version flags of .dynsym entries (.gnu.version), or NULL. */
static const uint16_t *find_versym(const struct cp_elf_image *im, size_t symtab_index, size_t nsyms)
{
	size_t n;
	if (elf_getshdrnum(im->elf, &n))
		return NULL;
	for (size_t i = 1; i < n; i++) {
		GElf_Shdr sh;
		if (cp_elf_section_header(im, i, &sh) || sh.sh_type != SHT_GNU_versym ||
		    sh.sh_link != symtab_index)
			continue;
		Elf_Data *d = cp_elf_section_data(im, i);
		if (d && d->d_buf && d->d_size >= nsyms * sizeof(uint16_t))
			return d->d_buf;
	}
	return NULL;
}

static int section_is_code(const struct cp_elf_image *im, size_t shndx, uint64_t addr)
{
	if (shndx == SHN_UNDEF || shndx >= SHN_LORESERVE)
		return 0;
	GElf_Shdr sh;
	if (cp_elf_section_header(im, shndx, &sh))
		return 0;
	return (sh.sh_flags & SHF_EXECINSTR) && addr >= sh.sh_addr &&
	       addr - sh.sh_addr <= sh.sh_size;
}

static int read_symbols(const struct cp_elf_image *im, size_t index, const GElf_Shdr *sh,
			struct cand_vec *cv, size_t *nread)
{
	Elf_Data *d = cp_elf_section_data(im, index);
	if (!d)
		return CP_EFORMAT;
	size_t nsyms = sh->sh_entsize ? d->d_size / sh->sh_entsize : 0;
	const uint16_t *versym = sh->sh_type == SHT_DYNSYM ? find_versym(im, index, nsyms) : NULL;
	for (size_t i = 1; i < nsyms; i++) {
		GElf_Sym sym;
		if (!gelf_getsym(d, (int)i, &sym))
			return cp_error(CP_EFORMAT, "%s: corrupt symbol %zu in section %zu",
					im->path, i, index);
		int type = GELF_ST_TYPE(sym.st_info);
		if (type != STT_FUNC && type != STT_GNU_IFUNC)
			continue;
		if (!section_is_code(im, sym.st_shndx, sym.st_value))
			continue;
		const char *name = elf_strptr(im->elf, sh->sh_link, sym.st_name);
		if (!name || !*name)
			continue;
		int bind = GELF_ST_BIND(sym.st_info);
		uint32_t flags = bind == STB_GLOBAL ? CP_PROC_GLOBAL
				 : bind == STB_WEAK ? CP_PROC_WEAK
						    : 0;
		if (type == STT_GNU_IFUNC)
			flags |= CP_PROC_IFUNC;
		if (versym && (versym[i] & 0x8000))
			flags |= CP_PROC_VERSIONED;
		cand_push(cv, sym.st_value, sym.st_size, name, flags, sym.st_shndx);
		(*nread)++;
	}
	return 0;
}

/* Lower is better: the primary name of an address. */
static int name_rank(const struct cp_sym_candidate *c)
{
	int r = (c->flags & CP_PROC_GLOBAL) ? 0 : (c->flags & CP_PROC_WEAK) ? 1 : 2;
	r = r * 2 + !!(c->flags & CP_PROC_VERSIONED);
	int under = 0;
	while (c->name[under] == '_')
		under++;
	return r * 8 + (under > 7 ? 7 : under);
}

static int cand_cmp(const void *a, const void *b)
{
	const struct cp_sym_candidate *x = a, *y = b;
	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	int rx = name_rank(x), ry = name_rank(y);
	if (rx != ry)
		return rx - ry;
	if (x->size != y->size)
		return x->size > y->size ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* Length of the parent name if name is a split part "parent.cold[.N]", else 0. */
static size_t cold_parent_len(const char *name)
{
	const char *p = strstr(name, ".cold");
	if (!p || p == name)
		return 0;
	const char *q = p + 5;
	if (*q == '.') {
		q++;
		if (!*q)
			return 0;
		while (*q >= '0' && *q <= '9')
			q++;
	}
	return *q ? 0 : (size_t)(p - name);
}

static int proc_has_name(const struct cp_proc *p, const char *name)
{
	if (!strcmp(p->linkage, name))
		return 1;
	for (size_t i = 0; i < p->naliases; i++)
		if (!strcmp(p->aliases[i], name))
			return 1;
	return 0;
}

static void proc_add_alias(struct cp_proc *p, const char *name)
{
	if (proc_has_name(p, name))
		return;
	p->aliases = xrealloc(p->aliases, (p->naliases + 1) * sizeof(*p->aliases));
	p->aliases[p->naliases++] = xstrdup(name);
}

static uint64_t section_end(const struct cp_elf_image *im, uint32_t shndx)
{
	GElf_Shdr sh;
	if (!shndx || cp_elf_section_header(im, shndx, &sh))
		return 0;
	return sh.sh_addr + sh.sh_size;
}

struct cold_part {
	uint64_t lo, hi;
	char *parent; /* parent linkage name */
	size_t cand;  /* first candidate of its group */
};

struct name_ref {
	const char *name;
	uint32_t proc;
};

static int name_ref_cmp(const void *a, const void *b)
{
	const struct name_ref *x = a, *y = b;
	return strcmp(x->name, y->name);
}

static void proc_from_group(struct cp_proc *p, struct cp_sym_candidate *g, size_t n, uint64_t end)
{
	memset(p, 0, sizeof(*p));
	size_t primary = 0;
	for (size_t i = 0; i < n; i++)
		if (!cold_parent_len(g[i].name)) {
			primary = i;
			break;
		}
	uint64_t size = 0;
	for (size_t i = 0; i < n; i++)
		if (g[i].size > size)
			size = g[i].size;
	p->linkage = xstrdup(g[primary].name);
	p->name = cp_demangle(p->linkage);
	p->lo = g[0].lo;
	p->flags = g[primary].flags;
	if (!size) {
		p->flags |= CP_PROC_NOSIZE;
		size = end > p->lo ? end - p->lo : 1;
	}
	p->hi = p->lo + size;
	for (size_t i = 0; i < n; i++)
		if (i != primary)
			proc_add_alias(p, g[i].name);
}

/* End of a size-0 symbol's guessed extent: the next symbol or its section's end. */
static uint64_t nosize_end(const struct cp_elf_image *im, struct cp_sym_candidate *c, size_t n,
			   size_t next)
{
	uint64_t end = section_end(im, c[0].section);
	if (next < n && (!end || c[next].lo < end))
		end = c[next].lo;
	return end;
}

static void attach_parts(struct cp_proc_table *t, struct cold_part *cold, size_t ncold);

static void build_procs(struct cp_proc_table *t, const struct cp_elf_image *im, struct cand_vec *cv)
{
	if (cv->n)
		qsort(cv->v, cv->n, sizeof(*cv->v), cand_cmp);
	struct cold_part *cold = NULL;
	size_t ncold = 0, cold_alloc = 0, proc_alloc = t->nprocs;
	for (size_t i = 0, j; i < cv->n; i = j) {
		for (j = i + 1; j < cv->n && cv->v[j].lo == cv->v[i].lo; j++)
			;
		int all_cold = 1;
		for (size_t k = i; k < j; k++)
			all_cold &= cold_parent_len(cv->v[k].name) != 0;
		uint64_t end = nosize_end(im, &cv->v[i], cv->n - i, j - i);
		XGROW(t->procs, t->nprocs + 1, proc_alloc);
		struct cp_proc *p = &t->procs[t->nprocs];
		proc_from_group(p, &cv->v[i], j - i, end);
		if (all_cold) {
			XGROW(cold, ncold + 1, cold_alloc);
			cold[ncold].lo = p->lo;
			cold[ncold].hi = p->hi;
			cold[ncold].parent = xstrndup(p->linkage, cold_parent_len(p->linkage));
			cold[ncold].cand = t->nprocs;
			ncold++;
		}
		t->nprocs++;
	}
	attach_parts(t, cold, ncold);
	free(cold);
}

static int64_t distance(uint64_t a, uint64_t b)
{
	return a > b ? (int64_t)(a - b) : (int64_t)(b - a);
}

/* Moves each cold part into its parent (by name, the nearest one when the name is not
 * unique); parts without a parent stay procedures of their own. */
static void attach_parts(struct cp_proc_table *t, struct cold_part *cold, size_t ncold)
{
	if (!ncold)
		return;
	size_t nref = 0;
	struct name_ref *refs = xmalloc(t->nprocs * sizeof(*refs));
	for (size_t i = 0; i < t->nprocs; i++)
		if (!cold_parent_len(t->procs[i].linkage))
			refs[nref++] = (struct name_ref){t->procs[i].linkage, (uint32_t)i};
	if (nref)
		qsort(refs, nref, sizeof(*refs), name_ref_cmp);
	char *dead = xcalloc(t->nprocs, 1);
	for (size_t c = 0; c < ncold; c++) {
		struct name_ref key = {cold[c].parent, 0}, *r;
		r = nref ? bsearch(&key, refs, nref, sizeof(*refs), name_ref_cmp) : NULL;
		if (r) {
			while (r > refs && !strcmp(r[-1].name, key.name))
				r--;
			struct name_ref *best = r;
			for (; r < refs + nref && !strcmp(r->name, key.name); r++)
				if (distance(t->procs[r->proc].lo, cold[c].lo) <
				    distance(t->procs[best->proc].lo, cold[c].lo))
					best = r;
			struct cp_proc *p = &t->procs[best->proc];
			p->parts = xrealloc(p->parts, (p->nparts + 1) * sizeof(*p->parts));
			p->parts[p->nparts++] = (struct cp_proc_part){cold[c].lo, cold[c].hi};
			dead[cold[c].cand] = 1;
		}
		free(cold[c].parent);
	}
	free(refs);
	/* Compact: drop the procedures that became parts. */
	size_t out = 0;
	for (size_t i = 0; i < t->nprocs; i++) {
		if (dead[i]) {
			struct cp_proc *p = &t->procs[i];
			free(p->name);
			free(p->linkage);
			for (size_t k = 0; k < p->naliases; k++)
				free(p->aliases[k]);
			free(p->aliases);
			free(p->parts);
			continue;
		}
		t->procs[out++] = t->procs[i];
	}
	t->nprocs = out;
	free(dead);
}

static int range_cmp(const void *a, const void *b)
{
	const struct cp_proc_range *x = a, *y = b;
	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	return (int)x->is_part - (int)y->is_part;
}

static void build_ranges(struct cp_proc_table *t)
{
	size_t n = 0, alloc = 0;
	free(t->ranges);
	t->ranges = NULL;
	for (size_t i = 0; i < t->nprocs; i++) {
		struct cp_proc *p = &t->procs[i];
		XGROW(t->ranges, n + 1 + p->nparts, alloc);
		t->ranges[n++] = (struct cp_proc_range){p->lo, p->hi, (uint32_t)i, 0};
		for (size_t k = 0; k < p->nparts; k++)
			t->ranges[n++] =
			    (struct cp_proc_range){p->parts[k].lo, p->parts[k].hi, (uint32_t)i, 1};
	}
	if (n)
		qsort(t->ranges, n, sizeof(*t->ranges), range_cmp);
	/* Clip overlaps so each address has one owner (the later start wins its extent). */
	size_t out = 0;
	for (size_t i = 0; i < n; i++) {
		struct cp_proc_range r = t->ranges[i];
		if (out && t->ranges[out - 1].lo == r.lo)
			continue;
		if (out && t->ranges[out - 1].hi > r.lo)
			t->ranges[out - 1].hi = r.lo;
		if (out && t->ranges[out - 1].hi <= t->ranges[out - 1].lo)
			out--;
		t->ranges[out++] = r;
	}
	t->nranges = out;
}

int cp_proc_table_read(struct cp_proc_table *t, const struct cp_elf_image *im)
{
	struct cand_vec cv = {0};
	int rc = 0;
	GElf_Shdr sh;
	size_t idx = 0, n = 0;
	elf_getshdrnum(im->elf, &n);
	/* .symtab when present (it includes the local functions), else .dynsym; PLT always. */
	for (int pass = 0; pass < 2 && !cv.n && !rc; pass++) {
		for (size_t i = 1; i < n && !rc; i++) {
			if (cp_elf_section_header(im, i, &sh))
				continue;
			if (sh.sh_type == (pass ? SHT_DYNSYM : SHT_SYMTAB))
				idx = i, rc = read_symbols(im, idx, &sh, &cv, &t->nsymbols);
		}
	}
	if (!rc)
		rc = cp_plt_read(im, &cv.v, &cv.n, &cv.alloc);
	if (!rc) {
		build_procs(t, im, &cv);
		build_ranges(t);
	}
	for (size_t i = 0; i < cv.n; i++)
		free(cv.v[i].name);
	free(cv.v);
	return rc;
}

/* Start of the first range above addr, or UINT64_MAX. */
static uint64_t next_range_start(const struct cp_proc_table *t, uint64_t addr)
{
	size_t i = cp_upper_bound_u64(t->ranges, t->nranges, sizeof(*t->ranges),
				      offsetof(struct cp_proc_range, lo), addr);
	return i < t->nranges ? t->ranges[i].lo : UINT64_MAX;
}

void cp_proc_table_add_uncovered(struct cp_proc_table *t, struct cp_sym_candidate *c, size_t n)
{
	size_t alloc = t->nprocs;
	for (size_t i = 0; i < n; i++) {
		const struct cp_proc_range *r = cp_proc_table_find(t, c[i].lo);
		uint64_t next = next_range_start(t, c[i].lo);
		if (!r && c[i].size && next - c[i].lo < c[i].size)
			c[i].size = next - c[i].lo; /* e.g. an FDE spanning several PLT stubs */
		if (r || !c[i].size) {
			free(c[i].name);
			continue;
		}
		XGROW(t->procs, t->nprocs + 1, alloc);
		struct cp_proc *p = &t->procs[t->nprocs++];
		proc_from_group(p, &c[i], 1, c[i].lo + c[i].size);
		if (!(p->flags & CP_PROC_FDE))
			p->flags |= CP_PROC_DWARF;
		free(c[i].name);
	}
	build_ranges(t);
}

const struct cp_proc_range *cp_proc_table_find(const struct cp_proc_table *t, uint64_t addr)
{
	size_t lo = 0, hi = t->nranges;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		const struct cp_proc_range *r = &t->ranges[mid];
		if (addr < r->lo)
			hi = mid;
		else if (addr >= r->hi)
			lo = mid + 1;
		else
			return r;
	}
	return NULL;
}
