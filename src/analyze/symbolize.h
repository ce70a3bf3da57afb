/* Address → source symbolization: procedure (demangled), call-site or statement
 * file:line, and the chain of inlined frames, for a module-relative address, without
 * structure recovery (no CFG). Implemented on the binary-analysis code (libelf/libdw) of
 * src/analyze/; used by `callpath struct --symbolize` (an independent check of the
 * structure files, tests/e2e/struct-addr2line.sh). The report and the exporters do not
 * use it: they read the names the correlation stored in the profile database.
 *
 * Offsets are ELF virtual addresses of the module (runtime address - load bias), exactly
 * as stored in cp_mf_node.offset. For a return address pass is_return = 1: the lookup then
 * uses offset - 1 (the call instruction), so a call at the very end of a function is not
 * attributed to the next one. */
#ifndef CP_ANALYZE_SYMBOLIZE_H
#define CP_ANALYZE_SYMBOLIZE_H

#include <stddef.h>
#include <stdint.h>

#define CP_SYM_MAX_INLINE 32

struct cp_sym_frame {
	const char *name; /* demangled procedure / inlined subroutine name; never NULL */
	const char *file; /* source file of the address within this frame, or NULL */
	int line;	  /* 0 if unknown */
	int column;
};

struct cp_sym_info {
	/* The procedure containing the address ("<module>+0x1234" style is the caller's job
	 * when found == 0). Strings are owned by the symbolizer, valid until it is freed. */
	int found;	       /* 1 if a procedure symbol covers the address */
	const char *procedure; /* outermost (non-inlined) procedure, demangled */
	uint64_t proc_lo;      /* procedure start offset */
	uint64_t proc_hi;
	const char *file; /* file:line of the address itself (innermost) */
	int line;
	/* Inlined frames, outermost first: inline[0] was inlined into `procedure` at
	 * inline[0].file:line (the call site), inline[n-1] contains the address. Each frame's
	 * file/line is its call site in the enclosing frame; `file`/`line` above is the
	 * location inside the innermost frame. */
	int ninline;
	struct cp_sym_frame inline_frames[CP_SYM_MAX_INLINE];
};

struct cp_symbolizer;

struct cp_symbolizer *cp_symbolizer_new(void);
void cp_symbolizer_free(struct cp_symbolizer *s);

/* Opens (once, cached) the module at path; build_id (may be NULL) is checked when given,
 * and a mismatch is reported once as a warning (the file changed since the run).
 * Returns 0, or a negative CP_E* code with cp_error() set (missing file, not ELF, ...);
 * a module without symbols is not an error (found == 0 for its addresses). */
int cp_symbolizer_lookup(struct cp_symbolizer *s, const char *path, const uint8_t *build_id,
			 size_t build_id_len, uint64_t offset, int is_return,
			 struct cp_sym_info *out);

#endif
