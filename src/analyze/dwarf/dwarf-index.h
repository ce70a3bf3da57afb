/* DWARF of a load module through libdw: open (in the file or in a separate debug file
 * found by build-id), an address -> compilation unit index, names, call sites and the
 * concrete inline chain of an address. Never parses DWARF by hand. */
#ifndef CP_ANALYZE_DWARF_INDEX_H
#define CP_ANALYZE_DWARF_INDEX_H

#include "analyze/elf/elf-image.h"

#include <elfutils/libdw.h>
#include <stddef.h>
#include <stdint.h>

struct cp_dwarf_cu_range {
	uint64_t lo, hi;
	Dwarf_Die cu;
};

struct cp_dwarf {
	Dwarf *dbg;	/* NULL: the module has no DWARF */
	Elf *debug_elf; /* separate debug file, if used */
	int debug_fd;
	char *debug_path;	       /* path of the separate debug file, or NULL */
	struct cp_dwarf_cu_range *cus; /* sorted by lo */
	size_t ncus;
	size_t nunits;
};

/* Opens the DWARF of im (or its /usr/lib/debug/.build-id/ file). No DWARF is not an error
 * (d->dbg stays NULL); corrupt DWARF is (CP_EFORMAT, with libdw's message). */
int cp_dwarf_open(struct cp_dwarf *d, const struct cp_elf_image *im);
/* The path of the separate debug file of a module with a build-id, into buf:
 * $CALLPATH_DEBUG_ROOT (default /usr/lib/debug)/.build-id/xx/yyyy.debug. Returns 0 (buf
 * untouched) when the module has no build-id; whether the file exists is not checked. */
int cp_dwarf_separate_path(const struct cp_elf_image *im, char *buf, size_t size);
void cp_dwarf_release(struct cp_dwarf *d);
/* Ends the libdw handle and begins a new one on the same ELF (whose debug sections libdw
 * has already decompressed, and which keeps them), then rebuilds the unit index. This
 * drops what libdw caches per unit for the life of a handle (parsed line tables and file
 * tables, abbreviations), which otherwise grows to several times the text size. Every
 * Dwarf_Die obtained before is invalid afterwards. CP_EFORMAT if the DWARF no longer
 * opens (d->dbg is then NULL). */
int cp_dwarf_reopen(struct cp_dwarf *d, const struct cp_elf_image *im);

/* The compilation unit whose ranges contain addr: 1 and *cu set, or 0. */
int cp_dwarf_cu_at(const struct cp_dwarf *d, uint64_t addr, Dwarf_Die *cu);

/* Display name of a subprogram/inlined DIE (following abstract_origin/specification):
 * demangled linkage name when there is one, else the qualified name of a C++ DIE
 * (cp_dwarf_qualified_name), else DW_AT_name, else "<unknown>". The result is malloc'd. */
char *cp_dwarf_die_name(Dwarf_Die *die);

/* For a C++ subprogram DIE without a linkage name (GCC's lambda operator()), the name the
 * demangler would print for it, qualified from the DIE tree:
 * `main::{lambda(int)#1}::operator()(int) const`. NULL when it has no enclosing scope
 * or is not C++. malloc'd (dwarf-names.c). */
char *cp_dwarf_qualified_name(Dwarf_Die *die);

/* Linkage (or plain) name without demangling, or NULL; not owned. */
const char *cp_dwarf_die_linkage(Dwarf_Die *die);

/* DW_AT_call_file/DW_AT_call_line of an inlined subroutine DIE. *file may be NULL. */
void cp_dwarf_call_site(Dwarf_Die *cu, Dwarf_Die *inl, const char **file, int *line);

/* DW_AT_decl_file/line of a subprogram DIE (following abstract_origin/specification). */
void cp_dwarf_decl(Dwarf_Die *cu, Dwarf_Die *die, const char **file, int *line);

/* Concrete chain of DIEs containing addr in cu: chain[0] the (outermost) subprogram, then
 * each nested DW_TAG_inlined_subroutine. Returns the number of entries (0: no subprogram
 * covers addr), at most max. */
int cp_dwarf_inline_chain(Dwarf_Die *cu, uint64_t addr, Dwarf_Die *chain, int max);

/* Source location of addr from the line table: 1 found, 0 not. *file may be NULL. */
int cp_dwarf_line_at(Dwarf_Die *cu, uint64_t addr, const char **file, int *line, int *column);

#endif
