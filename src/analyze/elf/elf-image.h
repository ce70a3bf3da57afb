/* One opened ELF load module (from a file or a memory buffer): validated header, build-id,
 * executable sections. The only place that calls elf_begin/elf_memory. Every later reader
 * (symbols, PLT, DWARF, code bytes) goes through this. */
#ifndef CP_ANALYZE_ELF_IMAGE_H
#define CP_ANALYZE_ELF_IMAGE_H

#include <gelf.h>
#include <libelf.h>
#include <stddef.h>
#include <stdint.h>

#define CP_BUILD_ID_MAX 64

struct cp_elf_section {
	uint64_t addr, size; /* ELF virtual address range */
	const uint8_t *data; /* size bytes (NULL for SHT_NOBITS) */
	const char *name;
	size_t index;
	uint64_t flags;
};

struct cp_elf_image {
	char *path; /* as given (or "<memory>") */
	int fd;	    /* -1 for memory images */
	Elf *elf;
	uint64_t file_size;
	uint16_t e_type; /* ET_EXEC, ET_DYN */
	uint8_t build_id[CP_BUILD_ID_MAX];
	size_t build_id_len;
	struct cp_elf_section *code; /* SHF_EXECINSTR sections with data, sorted by addr */
	size_t ncode;
	struct cp_elf_section *data; /* all SHF_ALLOC sections with data (code, rodata, ...) */
	size_t ndata;
	int has_debug_info; /* a non-empty .debug_info section is present */
};

/* Opens and validates: ELF64, little-endian, x86-64, ET_EXEC or ET_DYN, section headers
 * readable. Errors (CP_EIO, CP_EFORMAT, CP_ENOTSUP) name the file and what is wrong. */
int cp_elf_image_open(struct cp_elf_image *im, const char *path);
/* Same from a caller-owned buffer that must outlive the image (fuzzing, tests). */
int cp_elf_image_open_memory(struct cp_elf_image *im, const void *buf, size_t len,
			     const char *name);
void cp_elf_image_release(struct cp_elf_image *im);

/* Executable section containing vaddr, or NULL. */
const struct cp_elf_section *cp_elf_code_at(const struct cp_elf_image *im, uint64_t vaddr);
/* Copies up to len bytes at vaddr from the allocated sections; returns how many. */
size_t cp_elf_read(const struct cp_elf_image *im, uint64_t vaddr, void *buf, size_t len);
/* Section header by index (NULL if out of range); name via cp_elf_section_name. */
int cp_elf_section_header(const struct cp_elf_image *im, size_t index, GElf_Shdr *shdr);
const char *cp_elf_section_name(const struct cp_elf_image *im, const GElf_Shdr *shdr);
/* Finds a section by name; returns its index or 0. */
size_t cp_elf_find_section(const struct cp_elf_image *im, const char *name, GElf_Shdr *shdr);
/* Section data, checked against the file: NULL (with cp_error set) on corrupt headers. */
Elf_Data *cp_elf_section_data(const struct cp_elf_image *im, size_t index);
/* Lowercase hex of the build-id into buf (2*len+1 bytes); "" when there is none. */
void cp_build_id_hex(const uint8_t *id, size_t len, char *buf);

#endif
