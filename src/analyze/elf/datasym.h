/* Data symbols of a load module: which global variable (STT_OBJECT in .symtab, else
 * .dynsym) covers an address, for naming the synchronization objects a program waited on
 * (`callpath report --view sync`). Functions are procs.h's business. */
#ifndef CP_ANALYZE_DATASYM_H
#define CP_ANALYZE_DATASYM_H

#include "analyze/elf/elf-image.h"

#include <stdint.h>

/* Is vaddr (an ELF virtual address of im) inside an allocated, writable section (.data,
 * .bss, ...)? */
int cp_elf_in_writable(const struct cp_elf_image *im, uint64_t vaddr);
/* The name of the data object covering vaddr and vaddr's offset in it: 1, or 0 when no
 * sized object symbol covers it. *name points into im (valid while it is open). */
int cp_elf_data_symbol(const struct cp_elf_image *im, uint64_t vaddr, const char **name,
		       uint64_t *offset);

#endif
