/* PLT stubs as procedures `name@plt`. Each stub (in .plt, .plt.sec or .plt.got) jumps
 * through a GOT slot (`jmp *disp32(%rip)`, possibly with endbr64/bnd prefixes); the
 * dynamic relocation of that slot (JUMP_SLOT, GLOB_DAT, IRELATIVE) names the target. */
#include "analyze/elf/procs.h"

#include "base/error.h"
#include "base/xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct got_slot {
	uint64_t addr;
	char *name;
};

struct got_map {
	struct got_slot *v;
	size_t n, alloc;
};

static int slot_cmp(const void *a, const void *b)
{
	const struct got_slot *x = a, *y = b;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static void read_relocs(const struct cp_elf_image *im, size_t index, const GElf_Shdr *sh,
			struct got_map *m)
{
	Elf_Data *d = cp_elf_section_data(im, index), *symd;
	GElf_Shdr symsh;
	if (!d || cp_elf_section_header(im, sh->sh_link, &symsh))
		return;
	symd = cp_elf_section_data(im, sh->sh_link);
	size_t nrel = sh->sh_entsize ? d->d_size / sh->sh_entsize : 0;
	for (size_t i = 0; i < nrel; i++) {
		GElf_Rela r;
		GElf_Sym sym;
		if (!gelf_getrela(d, (int)i, &r))
			return;
		unsigned type = GELF_R_TYPE(r.r_info);
		size_t symi = GELF_R_SYM(r.r_info);
		char buf[64];
		const char *name = NULL;
		if (type == R_X86_64_IRELATIVE) {
			snprintf(buf, sizeof buf, "*ABS*+0x%llx", (unsigned long long)r.r_addend);
			name = buf;
		} else if ((type == R_X86_64_JUMP_SLOT || type == R_X86_64_GLOB_DAT) && symi &&
			   symd && gelf_getsym(symd, (int)symi, &sym)) {
			name = elf_strptr(im->elf, symsh.sh_link, sym.st_name);
		}
		if (!name || !*name)
			continue;
		XGROW(m->v, m->n + 1, m->alloc);
		m->v[m->n].addr = r.r_offset;
		m->v[m->n].name = xstrdup(name);
		m->n++;
	}
}

static const char *got_lookup(const struct got_map *m, uint64_t addr)
{
	struct got_slot key = {addr, NULL};
	struct got_slot *s = m->n ? bsearch(&key, m->v, m->n, sizeof(*m->v), slot_cmp) : NULL;
	return s ? s->name : NULL;
}

/* GOT slot an entry jumps through, or 0: `jmp *disp32(%rip)` at the entry's start, after
 * an optional endbr64 (IBT) and bnd prefix (MPX), as GNU ld and lld lay out .plt (lazy
 * binding), .plt.sec / .plt.bnd (IBT, MPX) and .plt.got entries. */
static uint64_t entry_slot(const uint8_t *code, size_t len, uint64_t addr)
{
	static const uint8_t endbr64[4] = {0xf3, 0x0f, 0x1e, 0xfa};
	size_t i = 0;
	if (len >= 4 && !memcmp(code, endbr64, 4))
		i = 4;
	if (i < len && code[i] == 0xf2)
		i++;
	if (i + 6 > len || code[i] != 0xff || code[i + 1] != 0x25)
		return 0;
	int32_t disp;
	memcpy(&disp, code + i + 2, 4);
	return addr + i + 6 + (int64_t)disp;
}

static struct cp_sym_candidate *push_cand(struct cp_sym_candidate **c, size_t *n, size_t *alloc,
					  const struct cp_elf_section *s, uint64_t lo,
					  uint64_t size)
{
	XGROW(*c, *n + 1, *alloc);
	struct cp_sym_candidate *e = &(*c)[(*n)++];
	e->lo = lo;
	e->size = size;
	e->flags = CP_PROC_PLT;
	e->section = (uint32_t)s->index;
	return e;
}

/* Entries jumping through a named GOT slot become `name@plt`. Code before the first entry
 * (the lazy-binding header of .plt, and with IBT the whole .plt, whose entries only push
 * and jump to the header) is one procedure named after the section, as objdump shows it. */
static void scan_plt(const struct cp_elf_section *s, uint64_t entsize, const struct got_map *m,
		     struct cp_sym_candidate **c, size_t *n, size_t *alloc)
{
	uint64_t first = s->size;
	for (uint64_t off = 0; off + entsize <= s->size; off += entsize) {
		uint64_t slot = entry_slot(s->data + off, entsize, s->addr + off);
		const char *name = slot ? got_lookup(m, slot) : NULL;
		if (!name)
			continue;
		if (first == s->size)
			first = off;
		size_t len = strlen(name) + 5;
		struct cp_sym_candidate *e = push_cand(c, n, alloc, s, s->addr + off, entsize);
		e->name = xmalloc(len);
		snprintf(e->name, len, "%s@plt", name);
	}
	if (first)
		push_cand(c, n, alloc, s, s->addr, first)->name = xstrdup(s->name);
}

int cp_plt_read(const struct cp_elf_image *im, struct cp_sym_candidate **c, size_t *n,
		size_t *alloc)
{
	struct got_map m = {0};
	size_t nsec;
	if (elf_getshdrnum(im->elf, &nsec))
		return 0;
	for (size_t i = 1; i < nsec; i++) {
		GElf_Shdr sh;
		if (!cp_elf_section_header(im, i, &sh) && sh.sh_type == SHT_RELA &&
		    (sh.sh_flags & SHF_ALLOC) && sh.sh_link && sh.sh_link < nsec)
			read_relocs(im, i, &sh, &m);
	}
	if (m.n)
		qsort(m.v, m.n, sizeof(*m.v), slot_cmp);
	for (size_t i = 0; i < im->ncode && m.n; i++) {
		const struct cp_elf_section *s = &im->code[i];
		if (strncmp(s->name, ".plt", 4) && strcmp(s->name, ".iplt"))
			continue;
		GElf_Shdr sh;
		uint64_t entsize = 16; /* 8 in .plt.got without IBT, which says so in sh_entsize */
		if (!cp_elf_section_header(im, s->index, &sh) && sh.sh_entsize >= 8 &&
		    sh.sh_entsize <= 32)
			entsize = sh.sh_entsize;
		scan_plt(s, entsize, &m, c, n, alloc);
	}
	for (size_t i = 0; i < m.n; i++)
		free(m.v[i].name);
	free(m.v);
	return 0;
}
