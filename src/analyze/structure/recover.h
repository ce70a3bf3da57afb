/* Structure recovery of one load module: procedures, the nested inline tree, loops (from
 * the CFG), statements -> a structure file (src/format/structure.h).
 *
 * Scope tree rules (docs/cmd-struct.md):
 *  - a procedure holds its code (main part and split parts such as .cold);
 *  - an address's inlined frames come from DWARF (DW_TAG_inlined_subroutine nesting);
 *  - a loop is placed inside the innermost inlined frame containing its header, under its
 *    parent loop (or the procedure); code of the loop whose inline chain goes deeper gets
 *    those deeper frames below the loop;
 *  - statements (file:line) are leaves; each address maps to exactly one leaf. */
#ifndef CP_ANALYZE_STRUCTURE_RECOVER_H
#define CP_ANALYZE_STRUCTURE_RECOVER_H

#include "analyze/module.h"
#include "format/structure.h"

#include <stddef.h>

struct cp_struct_options {
	int no_loops; /* skip CFG and loop analysis */
	/* Called now and then with procedures done / total (may be NULL). */
	void (*progress)(void *ctx, size_t done, size_t total);
	void *progress_ctx;
	/* libdw keeps the parsed line table of every unit it has read until the handle ends;
	 * the handle is reopened (cp_dwarf_reopen) once the units read since the last
	 * opening have this many line-table rows together. 0: CP_STRUCT_DWARF_ROWS;
	 * SIZE_MAX: never. The output does not depend on it. */
	size_t dwarf_rows_budget;
	size_t dwarf_reopens; /* out: how many times the handle was reopened */
	/* Threads for CFGs and loop nests (DWARF and assembly stay on the caller's thread);
	 * 0 = 1. The output is the same for any number. */
	unsigned jobs;
};

/* A few MB of libdw 0.188 line rows and file tables (2.5 MB on libc 2.36). */
#define CP_STRUCT_DWARF_ROWS 50000

/* Recovers the structure of m into b (b initialised by the caller; header module fields
 * are filled here). Returns 0 or a negative CP_E* code (corrupt DWARF, ...). */
int cp_struct_recover(struct cp_module *m, struct cp_structure_builder *b,
		      struct cp_struct_options *opt);

/* Whole pipeline from a memory buffer, for the fuzzer and tests: opens, recovers,
 * serializes and re-reads through the validating reader. */
int cp_struct_recover_memory(const void *buf, size_t len, struct cp_structure *out);

#endif
