/* Private to src/analyze/structure: per-procedure inputs of the scope-tree assembly. */
#ifndef CP_ANALYZE_STRUCTURE_RECOVER_INTERNAL_H
#define CP_ANALYZE_STRUCTURE_RECOVER_INTERNAL_H

#include "analyze/cfg/cfg-module.h"
#include "analyze/cfg/cfg.h"
#include "analyze/loops/loops.h"
#include "analyze/module.h"

#include <stddef.h>
#include <stdint.h>

/* An inlined call (DW_TAG_inlined_subroutine) of the procedure being analysed. */
struct rc_inline {
	Dwarf_Off die;	/* identity */
	int32_t parent; /* index in rc_proc.inl, -1 = the procedure */
	uint32_t depth; /* 1 = inlined directly into the procedure */
	char *name;	/* demangled, owned */
	const char *decl_file, *call_file;
	int decl_line, call_line;
	uint64_t low;
};

/* [lo, hi) -> value (an index, or -1). */
struct rc_seg {
	uint64_t lo, hi;
	int32_t v;
};

struct rc_line {
	uint64_t lo, hi;
	const char *file;
	int line;
};

struct rc_proc {
	struct cp_module *m;
	const struct cp_proc *p;
	uint32_t proc_index;
	struct cp_cfg_part *parts; /* parts[0] = main part (entry) */
	size_t nparts, parts_alloc;
	int has_dwarf;
	int has_cu;	/* cu is set (the procedure is inside a unit's ranges) */
	size_t cu_rows; /* rows of cu's line table (0 if it has none) */
	Dwarf_Die cu, sub;
	struct rc_inline *inl;
	size_t ninl, inl_alloc;
	struct rc_seg *inl_segs; /* innermost inlined call per address */
	size_t ninl_segs, inl_segs_alloc;
	struct rc_line *lines;
	size_t nlines, lines_alloc;
	struct rc_line *views; /* statement rows without code (lo == hi), by address */
	size_t nviews, views_alloc;
	struct rc_seg *loop_segs; /* innermost loop per address */
	size_t nloop_segs, loop_segs_alloc;
};

void rc_proc_init(struct rc_proc *rp);
void rc_proc_release(struct rc_proc *rp);
/* Collects parts, DWARF subprogram, inline tree and line pieces of procedure i.
 * CP_EFORMAT on corrupt DWARF. */
int rc_proc_collect(struct rc_proc *rp, struct cp_module *m, uint32_t i);

/* The value of the segment containing addr, or -1 (segs sorted, disjoint). */
int32_t rc_seg_find(const struct rc_seg *segs, size_t n, uint64_t addr);
const struct rc_line *rc_line_find(const struct rc_line *lines, size_t n, uint64_t addr);
/* Turns possibly nested ranges (value, depth) into disjoint innermost segments. */
struct rc_nested {
	uint64_t lo, hi;
	int32_t v;
	uint32_t depth;
};
/* parent[v] (may be NULL): a node counts only where its parent is active too, as a DWARF
 * reader descending the DIE tree sees it. nvalues bounds v. */
void rc_flatten(struct rc_nested *r, size_t n, const int32_t *parent, size_t nvalues,
		struct rc_seg **out, size_t *nout, size_t *alloc);

/* CFG + loop nest of one procedure (cfg/nest reused across procedures), built with the
 * module oracle (cfg-module.h), which is only read: one rc_loops per thread or slot. */
struct rc_loops {
	struct cp_cfg cfg;
	struct cp_loop_nest nest;
	const struct cp_cfg_oracle *oracle;
};
/* oracle must outlive l. */
void rc_loops_init(struct rc_loops *l, const struct cp_cfg_oracle *oracle);
void rc_loops_release(struct rc_loops *l);
int rc_loops_find(struct rc_loops *l, struct rc_proc *rp);

/* The line row naming loop lp (its for/while/do statement's line) of a loop whose
 * inlined frame is home (-1: the procedure); NULL when nothing in it has a line. */
const struct rc_line *rc_loop_line(struct rc_proc *rp, const struct rc_loops *loops,
				   const struct cp_loop *lp, int32_t home);

/* Calls fn(ctx, k) for every k in [0, n), on up to `threads` threads (the caller's one
 * among them); returns when all are done. fn must be safe to run concurrently. */
void rc_parallel_for(size_t n, unsigned threads, void (*fn)(void *ctx, size_t k), void *ctx);

#endif
