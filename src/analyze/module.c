#include "analyze/module.h"

#include "base/error.h"
#include "base/xalloc.h"

#include <dwarf.h>
#include <stdlib.h>
#include <string.h>

struct dwarf_cands {
	struct cp_sym_candidate *v;
	size_t n, alloc;
};

static void add_subprogram(struct dwarf_cands *c, Dwarf_Die *die)
{
	Dwarf_Addr base, start, end;
	ptrdiff_t off = 0;
	const char *name = cp_dwarf_die_linkage(die);
	if (!name)
		return;
	/* The entry part only; other ranges (.cold) are added as parts by the structure
	 * recovery from the subprogram's ranges. */
	Dwarf_Addr entry;
	if (dwarf_entrypc(die, &entry))
		return;
	while ((off = dwarf_ranges(die, off, &base, &start, &end)) > 0) {
		if (start <= entry && entry < end) {
			XGROW(c->v, c->n + 1, c->alloc);
			c->v[c->n++] = (struct cp_sym_candidate){start, end - start, xstrdup(name),
								 CP_PROC_GLOBAL, 0};
			return;
		}
	}
}

static void collect_subprograms(struct dwarf_cands *c, Dwarf_Die *parent, int depth)
{
	Dwarf_Die child;
	if (depth > 16 || dwarf_child(parent, &child) != 0)
		return;
	do {
		int tag = dwarf_tag(&child);
		if (tag == DW_TAG_subprogram)
			add_subprogram(c, &child);
		else if (tag == DW_TAG_namespace || tag == DW_TAG_class_type ||
			 tag == DW_TAG_structure_type || tag == DW_TAG_module)
			collect_subprograms(c, &child, depth + 1);
	} while (dwarf_siblingof(&child, &child) == 0);
}

/* DWARF subprograms the symbol table misses (stripped module with a debug file). */
static void add_dwarf_procs(struct cp_module *m)
{
	struct dwarf_cands c = {0};
	Dwarf_Off last = (Dwarf_Off)-1;
	for (size_t i = 0; i < m->dwarf.ncus; i++) {
		Dwarf_Die *cu = &m->dwarf.cus[i].cu;
		if (dwarf_dieoffset(cu) == last)
			continue;
		last = dwarf_dieoffset(cu);
		collect_subprograms(&c, cu, 0);
	}
	if (c.n)
		cp_proc_table_add_uncovered(&m->procs, c.v, c.n);
	free(c.v);
}

static int module_finish(struct cp_module *m, int flags)
{
	int rc = cp_proc_table_read(&m->procs, &m->image);
	if (rc)
		return rc;
	rc = cp_dwarf_open(&m->dwarf, &m->image);
	if (rc) {
		if (flags & CP_MODULE_STRICT_DWARF)
			return rc;
		m->dwarf_error = xstrdup(cp_error_message());
		return 0;
	}
	if (m->dwarf.dbg && m->image.ncode)
		add_dwarf_procs(m);
	return 0;
}

int cp_module_open(struct cp_module *m, const char *path, int flags)
{
	memset(m, 0, sizeof(*m));
	m->image.fd = m->dwarf.debug_fd = -1;
	int rc = cp_elf_image_open(&m->image, path);
	if (!rc)
		rc = module_finish(m, flags);
	if (rc)
		cp_module_release(m);
	return rc;
}

int cp_module_open_memory(struct cp_module *m, const void *buf, size_t len, const char *name,
			  int flags)
{
	memset(m, 0, sizeof(*m));
	m->image.fd = m->dwarf.debug_fd = -1;
	int rc = cp_elf_image_open_memory(&m->image, buf, len, name);
	if (!rc)
		rc = module_finish(m, flags);
	if (rc)
		cp_module_release(m);
	return rc;
}

void cp_module_release(struct cp_module *m)
{
	cp_dwarf_release(&m->dwarf);
	cp_proc_table_release(&m->procs);
	cp_elf_image_release(&m->image);
	free(m->dwarf_error);
	memset(m, 0, sizeof(*m));
	m->image.fd = m->dwarf.debug_fd = -1;
}
