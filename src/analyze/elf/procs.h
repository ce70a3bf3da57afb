/* The procedure table of a load module, from its ELF symbols: .symtab and .dynsym (FUNC
 * and IFUNC symbols in executable sections), PLT stubs (`name@plt`), and later DWARF
 * subprograms the symbols miss. Aliases (several names at one address) become one
 * procedure; split parts (`foo.cold`, `foo.cold.1`) are attached to their parent; C++
 * names are demangled. The one ELF symbol reader of the project: the symbolizer and the
 * structure recovery both use it. */
#ifndef CP_ANALYZE_PROCS_H
#define CP_ANALYZE_PROCS_H

#include "analyze/elf/elf-image.h"

#include <stddef.h>
#include <stdint.h>

enum {
	CP_PROC_GLOBAL = 1 << 0,
	CP_PROC_WEAK = 1 << 1,
	CP_PROC_PLT = 1 << 2,
	CP_PROC_DWARF = 1 << 3,	 /* known only from DWARF */
	CP_PROC_NOSIZE = 1 << 4, /* symbol had size 0; extent guessed up to the next one */
	CP_PROC_IFUNC = 1 << 5,
	CP_PROC_VERSIONED = 1 << 6, /* a hidden (non-default) symbol version */
	CP_PROC_FDE = 1 << 7	    /* no symbol: found from its .eh_frame FDE (sub_<hex>) */
};

struct cp_proc_part {
	uint64_t lo, hi;
};

struct cp_proc {
	char *name;	 /* demangled (== linkage for C) */
	char *linkage;	 /* symbol name as in the ELF file */
	uint64_t lo, hi; /* the main part (entry point lo) */
	uint32_t flags;
	char **aliases; /* other symbol names at lo (linkage names) */
	size_t naliases;
	struct cp_proc_part *parts; /* split-off parts (.cold), not including [lo,hi) */
	size_t nparts;
};

/* Address range -> procedure; sorted by lo, non-overlapping. */
struct cp_proc_range {
	uint64_t lo, hi;
	uint32_t proc;
	uint32_t is_part; /* a split-off part of proc */
};

struct cp_proc_table {
	struct cp_proc *procs;
	size_t nprocs;
	struct cp_proc_range *ranges;
	size_t nranges;
	size_t nsymbols; /* FUNC symbols read, before merging */
};

void cp_proc_table_init(struct cp_proc_table *t);
void cp_proc_table_release(struct cp_proc_table *t);
/* Reads symbols and PLT of the image. A module with no symbols gives an empty table. */
int cp_proc_table_read(struct cp_proc_table *t, const struct cp_elf_image *im);

/* One candidate symbol before merging (used by the PLT and DWARF readers). */
struct cp_sym_candidate {
	uint64_t lo, size;
	char *name; /* owned */
	uint32_t flags;
	uint32_t section; /* section index (0: unknown) */
};
/* Adds procedures for code the table does not cover yet (e.g. DWARF subprograms of a
 * stripped binary) and rebuilds the ranges. Takes ownership of the names. */
void cp_proc_table_add_uncovered(struct cp_proc_table *t, struct cp_sym_candidate *c, size_t n);

/* The range containing addr, or NULL. */
const struct cp_proc_range *cp_proc_table_find(const struct cp_proc_table *t, uint64_t addr);

/* Reads PLT stubs as candidates (`name@plt`); appends to *c. */
int cp_plt_read(const struct cp_elf_image *im, struct cp_sym_candidate **c, size_t *n,
		size_t *alloc);

/* Demangles a C++ (Itanium) name; returns a malloc'd copy of name when it is not one. */
char *cp_demangle(const char *name);

#endif
