/* The shared libraries a load module names (DT_NEEDED) and where it asks the dynamic
 * loader to look (DT_RUNPATH, else DT_RPATH): what `callpath record` reads to tell an MPI
 * program from others. */
#ifndef CP_ANALYZE_ELF_NEEDED_H
#define CP_ANALYZE_ELF_NEEDED_H

#include "analyze/elf/elf-image.h"

struct cp_elf_needed {
	char **names; /* DT_NEEDED strings, in order */
	size_t n;
	char *runpath; /* DT_RUNPATH or DT_RPATH ($ORIGIN expanded), or NULL */
};

/* 0 (a module without a dynamic section has no names), or a CP_E* code. */
int cp_elf_needed_read(const struct cp_elf_image *im, struct cp_elf_needed *out);
void cp_elf_needed_release(struct cp_elf_needed *nd);

#endif
