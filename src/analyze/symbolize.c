/* The report's symbolizer (symbolize.h) on the shared module reader (module.h). */
#include "analyze/symbolize.h"

#include "base/intern.h"
#include "analyze/module.h"
#include "base/error.h"
#include "base/xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct sym_module {
	char *path;
	int rc;	     /* result of opening; the module is usable when 0 */
	char *error; /* message when rc != 0 */
	int warned;  /* build-id mismatch or DWARF trouble reported */
	struct cp_module mod;
};

/* Direct-mapped memo of answers: reports ask for the same return addresses many times. */
#define SYM_CACHE_SIZE 1024

struct sym_cache_entry {
	const struct sym_module *mod;
	uint64_t addr;
	struct cp_sym_info info;
};

struct cp_symbolizer {
	struct sym_module **mods;
	size_t nmods, alloc;
	struct cp_intern names;
	struct sym_cache_entry *cache;
};

struct cp_symbolizer *cp_symbolizer_new(void)
{
	struct cp_symbolizer *s = xcalloc(1, sizeof(*s));
	cp_intern_init(&s->names);
	s->cache = xcalloc(SYM_CACHE_SIZE, sizeof(*s->cache));
	return s;
}

void cp_symbolizer_free(struct cp_symbolizer *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->nmods; i++) {
		struct sym_module *m = s->mods[i];
		if (!m->rc)
			cp_module_release(&m->mod);
		free(m->path);
		free(m->error);
		free(m);
	}
	free(s->mods);
	free(s->cache);
	cp_intern_release(&s->names);
	free(s);
}

static struct sym_module *module_get(struct cp_symbolizer *s, const char *path)
{
	for (size_t i = 0; i < s->nmods; i++)
		if (!strcmp(s->mods[i]->path, path)) {
			struct sym_module *m = s->mods[i];
			/* Move to front: the report asks for the same module repeatedly. */
			memmove(s->mods + 1, s->mods, i * sizeof(*s->mods));
			s->mods[0] = m;
			return m;
		}
	struct sym_module *m = xcalloc(1, sizeof(*m));
	m->path = xstrdup(path);
	m->rc = cp_module_open(&m->mod, path, 0);
	if (m->rc)
		m->error = xstrdup(cp_error_message());
	XGROW(s->mods, s->nmods + 1, s->alloc);
	memmove(s->mods + 1, s->mods, s->nmods * sizeof(*s->mods));
	s->mods[0] = m;
	s->nmods++;
	return m;
}

static void check_module(struct sym_module *m, const uint8_t *build_id, size_t len)
{
	if (m->warned)
		return;
	const struct cp_elf_image *im = &m->mod.image;
	if (build_id && len && im->build_id_len &&
	    (len != im->build_id_len || memcmp(build_id, im->build_id, len))) {
		fprintf(stderr,
			"callpath: warning: %s changed since the run (build-id differs); "
			"its symbols may be wrong\n",
			m->path);
		m->warned = 1;
	}
	if (m->mod.dwarf_error) {
		fprintf(stderr, "callpath: warning: %s: DWARF not used (%s); symbols only\n",
			m->path, m->mod.dwarf_error);
		m->warned = 1;
	}
}

static void fill_inline(struct cp_symbolizer *s, Dwarf_Die *cu, Dwarf_Die *chain, int n,
			struct cp_sym_info *out)
{
	for (int i = 1; i < n && out->ninline < CP_SYM_MAX_INLINE; i++) {
		struct cp_sym_frame *f = &out->inline_frames[out->ninline++];
		char *name = cp_dwarf_die_name(&chain[i]);
		f->name = cp_intern(&s->names, name);
		free(name);
		cp_dwarf_call_site(cu, &chain[i], &f->file, &f->line);
		f->column = 0;
	}
}

static void lookup_dwarf(struct cp_symbolizer *s, struct cp_module *mod, uint64_t addr,
			 struct cp_sym_info *out)
{
	Dwarf_Die cu, chain[CP_SYM_MAX_INLINE + 1];
	if (!mod->dwarf.dbg || !cp_dwarf_cu_at(&mod->dwarf, addr, &cu))
		return;
	int column;
	cp_dwarf_line_at(&cu, addr, &out->file, &out->line, &column);
	int n = cp_dwarf_inline_chain(&cu, addr, chain, CP_SYM_MAX_INLINE + 1);
	if (n <= 0)
		return;
	if (!out->found) {
		char *name = cp_dwarf_die_name(&chain[0]);
		out->procedure = cp_intern(&s->names, name);
		free(name);
		Dwarf_Addr lo = 0, hi = 0;
		if (dwarf_lowpc(&chain[0], &lo) == 0 && dwarf_highpc(&chain[0], &hi) == 0) {
			out->proc_lo = lo;
			out->proc_hi = hi;
		}
		out->found = 1;
	}
	fill_inline(s, &cu, chain, n, out);
}

int cp_symbolizer_lookup(struct cp_symbolizer *s, const char *path, const uint8_t *build_id,
			 size_t build_id_len, uint64_t offset, int is_return,
			 struct cp_sym_info *out)
{
	memset(out, 0, sizeof(*out));
	struct sym_module *m = module_get(s, path);
	if (m->rc)
		return cp_error(m->rc, "%s", m->error);
	check_module(m, build_id, build_id_len);
	uint64_t addr = is_return && offset ? offset - 1 : offset;
	struct sym_cache_entry *ce =
	    &s->cache[(addr ^ (addr >> 12) ^ (uintptr_t)m) % SYM_CACHE_SIZE];
	if (ce->mod == m && ce->addr == addr) {
		*out = ce->info;
		return 0;
	}
	const struct cp_proc_range *r = cp_proc_table_find(&m->mod.procs, addr);
	if (r) {
		const struct cp_proc *p = &m->mod.procs.procs[r->proc];
		out->found = 1;
		out->procedure = p->name;
		out->proc_lo = p->lo;
		out->proc_hi = p->hi;
	}
	lookup_dwarf(s, &m->mod, addr, out);
	ce->mod = m;
	ce->addr = addr;
	ce->info = *out;
	return 0;
}
