/* Data symbols (datasym.h). */
#include "analyze/elf/datasym.h"

int cp_elf_in_writable(const struct cp_elf_image *im, uint64_t vaddr)
{
	size_t n = 0;
	elf_getshdrnum(im->elf, &n);
	for (size_t i = 1; i < n; i++) {
		GElf_Shdr sh;
		if (cp_elf_section_header(im, i, &sh))
			continue;
		if ((sh.sh_flags & (SHF_ALLOC | SHF_WRITE)) != (SHF_ALLOC | SHF_WRITE))
			continue;
		if (vaddr >= sh.sh_addr && vaddr - sh.sh_addr < sh.sh_size)
			return 1;
	}
	return 0;
}

/* In the symbol table at section index: 1 if found. */
static int find_in(const struct cp_elf_image *im, size_t index, const GElf_Shdr *sh, uint64_t vaddr,
		   const char **name, uint64_t *offset)
{
	Elf_Data *d = cp_elf_section_data(im, index);
	size_t nsyms = d && sh->sh_entsize ? d->d_size / sh->sh_entsize : 0;
	for (size_t i = 1; i < nsyms; i++) {
		GElf_Sym sym;
		if (!gelf_getsym(d, (int)i, &sym) || GELF_ST_TYPE(sym.st_info) != STT_OBJECT)
			continue;
		if (vaddr < sym.st_value || vaddr - sym.st_value >= sym.st_size)
			continue;
		const char *s = elf_strptr(im->elf, sh->sh_link, sym.st_name);
		if (!s || !*s)
			continue;
		*name = s;
		*offset = vaddr - sym.st_value;
		return 1;
	}
	return 0;
}

int cp_elf_data_symbol(const struct cp_elf_image *im, uint64_t vaddr, const char **name,
		       uint64_t *offset)
{
	size_t n = 0;
	elf_getshdrnum(im->elf, &n);
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 1; i < n; i++) {
			GElf_Shdr sh;
			if (cp_elf_section_header(im, i, &sh) ||
			    sh.sh_type != (pass ? SHT_DYNSYM : SHT_SYMTAB))
				continue;
			if (find_in(im, i, &sh, vaddr, name, offset))
				return 1;
		}
	}
	return 0;
}
