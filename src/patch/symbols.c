/* The function symbols of an ELF file read in place (mmap, no libelf: the runtime reads
 * every module it probes), and the refusal rules known before looking at live code. */
#include "patch/patch.h"
#include "patch/select.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* Section names usable when the table is in bounds, NUL-terminated, every name inside. */
static const char *section_names(const struct cp_patch_elf *e, unsigned shstrndx)
{
	if (shstrndx >= e->nsec)
		return NULL;
	const Elf64_Shdr *ss = &e->sh[shstrndx];
	if (!ss->sh_size || ss->sh_offset > e->size || ss->sh_size > e->size - ss->sh_offset ||
	    e->f[ss->sh_offset + ss->sh_size - 1] != 0)
		return NULL;
	for (unsigned i = 0; i < e->nsec; i++)
		if (e->sh[i].sh_name >= ss->sh_size)
			return NULL;
	return (const char *)e->f + ss->sh_offset;
}

int cp_patch_elf_map(struct cp_patch_elf *e, const char *path)
{
	struct stat st;
	memset(e, 0, sizeof(*e));
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) || st.st_size < (off_t)sizeof(Elf64_Ehdr)) {
		close(fd);
		return -1;
	}
	void *f = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (f == MAP_FAILED)
		return -1;
	e->f = f;
	e->size = (size_t)st.st_size;
	const Elf64_Ehdr *eh = f;
	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh->e_shentsize != sizeof(Elf64_Shdr) || eh->e_shoff > e->size ||
	    (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr) > e->size - eh->e_shoff) {
		cp_patch_elf_unmap(e);
		return -1;
	}
	e->sh = (const Elf64_Shdr *)(e->f + eh->e_shoff);
	e->nsec = eh->e_shnum;
	e->shstr = section_names(e, eh->e_shstrndx);
	return 0;
}

void cp_patch_elf_unmap(struct cp_patch_elf *e)
{
	if (e->f)
		munmap((void *)e->f, e->size);
	memset(e, 0, sizeof(*e));
}

void cp_patch_elf_iter_init(struct cp_patch_elf_iter *it)
{
	memset(it, 0, sizeof(*it));
}

/* Starts the symbol table at section index it->tab, or returns 0 when it is unusable. */
static int open_table(const struct cp_patch_elf *e, struct cp_patch_elf_iter *it)
{
	const Elf64_Shdr *tab = &e->sh[it->tab];
	if (tab->sh_type != (it->pass ? SHT_DYNSYM : SHT_SYMTAB) || tab->sh_link >= e->nsec ||
	    tab->sh_entsize != sizeof(Elf64_Sym) || tab->sh_offset > e->size ||
	    tab->sh_size > e->size - tab->sh_offset)
		return 0;
	const Elf64_Shdr *strs = &e->sh[tab->sh_link];
	if (!strs->sh_size || strs->sh_offset > e->size ||
	    strs->sh_size > e->size - strs->sh_offset ||
	    e->f[strs->sh_offset + strs->sh_size - 1] != 0)
		return 0;
	it->syms = (const Elf64_Sym *)(e->f + tab->sh_offset);
	it->n = tab->sh_size / sizeof(Elf64_Sym);
	it->i = 1;
	it->str = (const char *)e->f + strs->sh_offset;
	it->strsize = strs->sh_size;
	return 1;
}

/* Advances to the next usable table (.symtab ones, then .dynsym ones); 0 at the end. */
static int next_table(const struct cp_patch_elf *e, struct cp_patch_elf_iter *it)
{
	for (;;) {
		if (it->syms)
			it->tab++;
		it->syms = NULL;
		if (it->tab >= e->nsec) {
			if (it->pass)
				return 0;
			it->pass = 1;
			it->tab = 0;
		}
		if (open_table(e, it))
			return 1;
		it->tab++;
	}
}

int cp_patch_elf_next(const struct cp_patch_elf *e, struct cp_patch_elf_iter *it,
		      struct cp_patch_func *fn)
{
	if (!e->f)
		return 0;
	for (;;) {
		if ((!it->syms || it->i >= it->n) && !next_table(e, it))
			return 0;
		const Elf64_Sym *s = &it->syms[it->i++];
		unsigned type = ELF64_ST_TYPE(s->st_info);
		if ((type != STT_FUNC && type != STT_GNU_IFUNC) || s->st_shndx == SHN_UNDEF ||
		    s->st_shndx >= e->nsec || s->st_name >= it->strsize)
			continue;
		fn->name = it->str + s->st_name;
		fn->sym = s;
		fn->sec = &e->sh[s->st_shndx];
		fn->secname = e->shstr ? e->shstr + fn->sec->sh_name : NULL;
		fn->unnamed = 0;
		return 1;
	}
}

/* Whether a defined function symbol of a table of e covers vaddr. */
static int symbol_covers(const struct cp_patch_elf *e, uint64_t vaddr)
{
	struct cp_patch_elf_iter it;
	struct cp_patch_func fn;
	cp_patch_elf_iter_init(&it);
	while (cp_patch_elf_next(e, &it, &fn))
		if (vaddr >= fn.sym->st_value &&
		    vaddr - fn.sym->st_value < (fn.sym->st_size ? fn.sym->st_size : 1))
			return 1;
	return 0;
}

int cp_patch_elf_unnamed(const struct cp_patch_elf *e, uint64_t vaddr, uint64_t size, char *name,
			 Elf64_Sym *sym, struct cp_patch_func *fn)
{
	const uint64_t exec = SHF_ALLOC | SHF_EXECINSTR;
	unsigned i = 0;
	for (; i < e->nsec; i++)
		if ((e->sh[i].sh_flags & exec) == exec && vaddr >= e->sh[i].sh_addr &&
		    vaddr - e->sh[i].sh_addr < e->sh[i].sh_size)
			break;
	if (i == e->nsec || symbol_covers(e, vaddr))
		return -1;
	memset(sym, 0, sizeof *sym);
	sym->st_info = ELF64_ST_INFO(STB_LOCAL, STT_FUNC);
	sym->st_shndx = (Elf64_Section)i;
	sym->st_value = vaddr;
	sym->st_size = size;
	snprintf(name, 21, "sub_%llx", (unsigned long long)vaddr);
	fn->name = name;
	fn->sym = sym;
	fn->sec = &e->sh[i];
	fn->secname = e->shstr ? e->shstr + fn->sec->sh_name : NULL;
	fn->unnamed = 1;
	return 0;
}

int cp_patch_check_function(const struct cp_patch_elf *e, const struct cp_patch_func *fn)
{
	const Elf64_Sym *s = fn->sym;
	const Elf64_Shdr *sec = fn->sec;
	if (fn->unnamed && !s->st_size)
		return CP_PATCH_NO_FDE;
	if (fn->unnamed && s->st_value == ((const Elf64_Ehdr *)(const void *)e->f)->e_entry)
		return CP_PATCH_NO_CALLER; /* _start, stripped */
	int st = cp_patch_check_symbol(ELF64_ST_TYPE(s->st_info), s->st_size, fn->secname,
				       (sec->sh_flags & SHF_EXECINSTR) != 0);
	if (!st)
		st = cp_patch_check_name(fn->name);
	if (!st && (sec->sh_type == SHT_NOBITS || s->st_value < sec->sh_addr ||
		    s->st_value - sec->sh_addr > sec->sh_size ||
		    s->st_size > sec->sh_size - (s->st_value - sec->sh_addr) ||
		    sec->sh_offset > e->size || sec->sh_size > e->size - sec->sh_offset))
		st = CP_PATCH_NOT_EXEC;
	return st;
}

int cp_patch_check_file(const struct cp_patch_elf *e, const struct cp_patch_func *fn)
{
	int st = cp_patch_check_function(e, fn);
	if (st)
		return st;
	const uint8_t *code = e->f + fn->sec->sh_offset + (fn->sym->st_value - fn->sec->sh_addr);
	struct cp_patch_plan plan;
	return cp_patch_plan(code, fn->sym->st_size, fn->sym->st_value, &plan);
}
