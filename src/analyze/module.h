/* A load module opened for analysis: its ELF image, procedure table and DWARF. Shared by
 * the symbolizer and the structure recovery. */
#ifndef CP_ANALYZE_MODULE_H
#define CP_ANALYZE_MODULE_H

#include "analyze/dwarf/dwarf-index.h"
#include "analyze/elf/elf-image.h"
#include "analyze/elf/procs.h"

enum {
	/* Corrupt DWARF fails the open (structure recovery); without it the module is
	 * opened with symbols only and dwarf_error holds the reason (symbolizer). */
	CP_MODULE_STRICT_DWARF = 1 << 0,
};

struct cp_module {
	struct cp_elf_image image;
	struct cp_proc_table procs;
	struct cp_dwarf dwarf;
	char *dwarf_error; /* why DWARF is not used, or NULL */
};

int cp_module_open(struct cp_module *m, const char *path, int flags);
int cp_module_open_memory(struct cp_module *m, const void *buf, size_t len, const char *name,
			  int flags);
void cp_module_release(struct cp_module *m);

#endif
