#include "analyze/module.h"

#include "base/error.h"
#include "base/xalloc.h"

#include <dwarf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct dwarf_cands {
	struct cp_sym_candidate *v;
	size_t n, alloc;
};

/* Source names for procedures whose symbol is not a C++ mangled name: gfortran's MAIN__
 * is the program `nest`, __mod_MOD_f is f, a C alias becomes the name in the source. */
static void use_source_name(struct cp_proc_table *t, Dwarf_Die *die, Dwarf_Addr entry)
{
	const struct cp_proc_range *r = cp_proc_table_find(t, entry);
	Dwarf_Attribute attr;
	const char *name;
	if (!r || r->is_part)
		return;
	struct cp_proc *p = &t->procs[r->proc];
	if (p->lo != entry || (p->flags & CP_PROC_PLT) || !strncmp(p->linkage, "_Z", 2))
		return;
	name = dwarf_attr_integrate(die, DW_AT_name, &attr) ? dwarf_formstring(&attr) : NULL;
	if (!name || !*name || !strcmp(name, p->name))
		return;
	free(p->name);
	p->name = xstrdup(name);
}

static void add_subprogram(struct dwarf_cands *c, struct cp_proc_table *t, Dwarf_Die *die)
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
	use_source_name(t, die, entry);
	while ((off = dwarf_ranges(die, off, &base, &start, &end)) > 0) {
		if (start <= entry && entry < end) {
			XGROW(c->v, c->n + 1, c->alloc);
			c->v[c->n++] = (struct cp_sym_candidate){start, end - start, xstrdup(name),
								 CP_PROC_GLOBAL, 0};
			return;
		}
	}
}

static void collect_subprograms(struct dwarf_cands *c, struct cp_proc_table *t, Dwarf_Die *parent,
				int depth)
{
	Dwarf_Die child;
	if (depth > 16 || dwarf_child(parent, &child) != 0)
		return;
	do {
		int tag = dwarf_tag(&child);
		if (tag == DW_TAG_subprogram)
			add_subprogram(c, t, &child);
		else if (tag == DW_TAG_namespace || tag == DW_TAG_class_type ||
			 tag == DW_TAG_structure_type || tag == DW_TAG_module)
			collect_subprograms(c, t, &child, depth + 1);
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
		collect_subprograms(&c, &m->procs, cu, 0);
	}
	if (c.n)
		cp_proc_table_add_uncovered(&m->procs, c.v, c.n);
	free(c.v);
}

/* FDE start addresses from the .eh_frame_hdr search table (the LSB layout GNU ld writes:
 * version 1, table encoding datarel|sdata4, count udata4). 0 entries for anything else. */
static size_t eh_frame_starts(const struct cp_elf_image *im, uint64_t **out)
{
	GElf_Shdr sh;
	size_t idx = cp_elf_find_section(im, ".eh_frame_hdr", &sh);
	Elf_Data *d = idx ? cp_elf_section_data(im, idx) : NULL;
	*out = NULL;
	if (!d || !d->d_buf || d->d_size < 12)
		return 0;
	const uint8_t *p = d->d_buf;
	if (p[0] != 1 || p[2] != 0x03 || p[3] != 0x3b || (p[1] & 0x0f) != 0x0b)
		return 0;
	uint32_t count;
	memcpy(&count, p + 8, 4);
	if (count > (d->d_size - 12) / 8)
		return 0;
	*out = xmalloc((count ? count : 1) * sizeof(**out));
	for (uint32_t i = 0; i < count; i++) {
		int32_t rel;
		memcpy(&rel, p + 12 + 8 * (size_t)i, 4);
		(*out)[i] = sh.sh_addr + (int64_t)rel;
	}
	return count;
}

/* End of the FDE starting at lo: follow libdw's CFI rows while they continue. */
static uint64_t fde_end(Dwarf_CFI *cfi, uint64_t lo, uint64_t limit)
{
	uint64_t addr = lo;
	while (addr < limit) {
		Dwarf_Frame *frame = NULL;
		Dwarf_Addr start, end;
		bool signalp;
		int bad = dwarf_cfi_addrframe(cfi, addr, &frame) ||
			  dwarf_frame_info(frame, &start, &end, &signalp) < 0 || start < lo ||
			  end <= addr;
		free(frame);
		if (bad)
			break;
		addr = end;
	}
	return addr < limit ? addr : limit;
}

/* Code with call-frame information but no symbol (stripped modules): one procedure per
 * FDE, named sub_<hex>. */
static void add_fde_procs(struct cp_module *m)
{
	uint64_t *starts;
	size_t n = eh_frame_starts(&m->image, &starts);
	Dwarf_CFI *cfi = n ? dwarf_getcfi_elf(m->image.elf) : NULL;
	struct dwarf_cands c = {0};
	for (size_t i = 0; cfi && i < n; i++) {
		const struct cp_elf_section *sec = cp_elf_code_at(&m->image, starts[i]);
		if (!sec || cp_proc_table_find(&m->procs, starts[i]))
			continue;
		uint64_t limit = sec->addr + sec->size;
		if (i + 1 < n && starts[i + 1] > starts[i] && starts[i + 1] < limit)
			limit = starts[i + 1];
		uint64_t end = fde_end(cfi, starts[i], limit);
		if (end <= starts[i])
			continue;
		char name[32];
		snprintf(name, sizeof name, "sub_%llx", (unsigned long long)starts[i]);
		XGROW(c.v, c.n + 1, c.alloc);
		c.v[c.n++] = (struct cp_sym_candidate){starts[i], end - starts[i], xstrdup(name),
						       CP_PROC_FDE, 0};
	}
	if (cfi)
		dwarf_cfi_end(cfi);
	free(starts);
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
	add_fde_procs(m);
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
