/* The source line that names a loop: the line of its for/while/do statement, found on the
 * instructions that control its iterations (docs/cmd-struct.md, "Loop lines"). */
#include "analyze/structure/recover-internal.h"

#include <string.h>

static int in_loop(const struct cp_loop_nest *nest, const struct cp_loop *lp, uint64_t addr)
{
	for (uint32_t i = 0; i < lp->nranges; i++) {
		const struct cp_loop_range *r = &nest->ranges[lp->first_range + i];
		if (addr >= r->lo && addr < r->hi)
			return 1;
	}
	return 0;
}

/* The line of the loop header; when the compiler gave it line 0 (clang does), the first
 * real line that follows inside the loop. */
static const struct rc_line *header_line(const struct rc_proc *rp, const struct cp_loop_nest *nest,
					 const struct cp_loop *lp)
{
	const struct rc_line *ln = rc_line_find(rp->lines, rp->nlines, lp->header);
	if (!ln || ln->line > 0)
		return ln;
	const struct rc_line *end = rp->lines + rp->nlines;
	for (const struct rc_line *p = ln + 1; p < end && p < ln + 64; p++)
		if (p->line > 0 && in_loop(nest, lp, p->lo))
			return p;
	return ln;
}

/* True when inline node `node` (-1: the procedure) is frame `home` or inside it. */
static bool in_frame(const struct rc_proc *rp, int32_t node, int32_t home)
{
	if (home < 0)
		return true;
	for (int32_t k = node; k >= 0; k = rp->inl[k].parent)
		if (k == home)
			return true;
	return false;
}

static bool is_cond(const struct cp_cfg_edge *e)
{
	return e->kind == CP_CFG_COND_TAKEN || e->kind == CP_CFG_COND_NOT_TAKEN;
}

/* A candidate instruction for a loop's statement line. */
struct line_pick {
	const struct rc_line *ln;
	uint64_t at, block; /* the instruction, the start of its block */
	int rank;
};

/* Keeps the branch ending block bl when it has a line in the loop's frame and outranks
 * the current pick (rank, then the higher address: the bottom of the loop). A branch of
 * line 0 (clang's merged code) takes the line of the block's last instruction that has
 * one (its compare). */
static void consider(const struct rc_proc *rp, int32_t home, const struct cp_cfg_block *bl,
		     int rank, struct line_pick *pick)
{
	uint64_t at = bl->last;
	if (rank < pick->rank || (rank == pick->rank && at <= pick->at))
		return;
	const struct rc_line *ln = rc_line_find(rp->lines, rp->nlines, at);
	while (ln && ln->line <= 0 && ln > rp->lines && ln[-1].hi == ln->lo && ln[-1].lo >= bl->lo)
		ln--;
	if (!ln || ln->line <= 0 || !ln->file ||
	    !in_frame(rp, rc_seg_find(rp->inl_segs, rp->ninl_segs, ln->lo), home))
		return;
	*pick = (struct line_pick){ln, at, bl->lo, rank};
}

/* Bounds the dominance checks of exit tests against latches (exits x back edges). */
#define RC_MAX_TEST_CHECKS 4096

/* The loop's exit test: a conditional branch of the loop itself (not of a nested loop)
 * that leaves it and runs on every iteration (dominates every back edge's source), the
 * first such one (it dominates the others). CP_CFG_NONE if there is none. */
static uint32_t exit_test(const struct rc_loops *loops, const struct cp_loop *lp)
{
	const struct cp_loop_nest *nest = &loops->nest;
	const struct cp_cfg_edge *edges = loops->cfg.edges;
	int32_t self = (int32_t)(lp - nest->loops);
	uint32_t best = CP_CFG_NONE;
	if ((uint64_t)lp->nexits * lp->nbacks > RC_MAX_TEST_CHECKS)
		return best;
	for (uint32_t i = 0; i < lp->nexits; i++) {
		const struct cp_cfg_edge *e = &edges[nest->edges[lp->first_exit + i]];
		bool every = is_cond(e) && nest->block_loop[e->src] == self;
		for (uint32_t k = 0; k < lp->nbacks && every; k++)
			every = cp_loops_dominates(nest, e->src,
						   edges[nest->edges[lp->first_back + k]].src);
		if (every && (best == CP_CFG_NONE || cp_loops_dominates(nest, e->src, best)))
			best = e->src;
	}
	return best;
}

static bool same_file(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

/* The first row of rows[0..n) not wholly before addr: a row of code ending after addr, or a
 * row without code (lo == hi) at or after it (rows sorted by address). */
static const struct rc_line *rows_from(const struct rc_line *rows, size_t n, uint64_t addr)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (rows[mid].hi <= addr && rows[mid].lo < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return rows + lo;
}

/* True when some row of the loop's code is on line `line` of `file` (line < 0: on a
 * line other than -line of file, or another file). Line 0 rows never count. */
static bool loop_has_line(const struct rc_proc *rp, const struct rc_loops *loops,
			  const struct cp_loop *lp, const char *file, int line)
{
	if (!rp->nlines)
		return false;
	const struct rc_line *end = rp->lines + rp->nlines;
	for (uint32_t i = 0; i < lp->nblocks; i++) {
		const struct cp_cfg_block *bl =
		    &loops->cfg.blocks[loops->nest.blocks[lp->first_block + i]];
		for (const struct rc_line *r = rows_from(rp->lines, rp->nlines, bl->lo);
		     r < end && r->lo < bl->hi; r++) {
			bool same =
			    r->line == (line < 0 ? -line : line) && same_file(r->file, file);
			if (r->line > 0 && same == (line > 0))
				return true;
		}
	}
	return false;
}

static bool is_header(const struct cp_loop_nest *nest, uint32_t block)
{
	int32_t l = nest->block_loop[block];
	return l >= 0 && nest->loops[l].header_block == block;
}

/* gcc's vectorised loops give every instruction, the closing compare included, the line
 * of the body statement; the loop statement's line is on the test for a scalar remainder
 * just after the loop: a conditional branch (not a loop's latch) one of whose successors
 * is the remainder, which starts with the body line again. NULL when the loop (without
 * nested loops, all its code on the picked line) does not have that shape. */
static const struct rc_line *remainder_test(const struct rc_proc *rp, const struct rc_loops *loops,
					    const struct cp_loop *lp, const struct line_pick *pick,
					    int32_t home)
{
	const struct cp_cfg *cfg = &loops->cfg;
	const struct cp_loop_nest *nest = &loops->nest;
	if (lp->nchildren || loop_has_line(rp, loops, lp, pick->ln->file, -pick->ln->line))
		return NULL;
	for (uint32_t i = 0; i < lp->nexits; i++) {
		const struct cp_cfg_edge *e = &cfg->edges[nest->edges[lp->first_exit + i]];
		if (e->dst == CP_CFG_NONE)
			continue;
		const struct cp_cfg_block *x = &cfg->blocks[e->dst];
		bool remainder = false, cond = x->nedges == 2;
		for (uint32_t k = 0; k < x->nedges && cond; k++) {
			const struct cp_cfg_edge *o = &cfg->edges[x->first_edge + k];
			cond = is_cond(o) && o->dst != CP_CFG_NONE && !is_header(nest, o->dst);
			const struct rc_line *r =
			    cond ? rows_from(rp->lines, rp->nlines, cfg->blocks[o->dst].lo) : NULL;
			remainder |= r && r < rp->lines + rp->nlines &&
				     r->lo == cfg->blocks[o->dst].lo && r->line == pick->ln->line &&
				     same_file(r->file, pick->ln->file);
		}
		struct line_pick test = {NULL, 0, 0, 0};
		if (cond && remainder)
			consider(rp, home, x, 1, &test);
		if (test.ln && test.ln->line != pick->ln->line &&
		    same_file(test.ln->file, pick->ln->file))
			return test.ln;
	}
	return NULL;
}

/* The declaration line of the function whose code inlined frame `frame` (-1: the
 * procedure) is, when it is in `file`; 0 otherwise. */
static int frame_decl_line(struct rc_proc *rp, int32_t frame, const char *file)
{
	const char *decl_file = NULL;
	int line = 0;
	if (frame >= 0) {
		decl_file = rp->inl[frame].decl_file;
		line = rp->inl[frame].decl_line;
	} else if (rp->has_dwarf) {
		cp_dwarf_decl(&rp->cu, &rp->sub, &decl_file, &line);
	}
	return same_file(decl_file, file) ? line : 0;
}

#define RC_MAX_VIEW_CHECKS 16

/* The lowest and highest lines of the loop's code in `file` (0, 0 if none). */
static void loop_line_bounds(const struct rc_proc *rp, const struct rc_loops *loops,
			     const struct cp_loop *lp, const char *file, int *min, int *max)
{
	*min = *max = 0;
	const struct rc_line *end = rp->lines + rp->nlines;
	for (uint32_t i = 0; i < lp->nblocks && rp->nlines; i++) {
		const struct cp_cfg_block *bl =
		    &loops->cfg.blocks[loops->nest.blocks[lp->first_block + i]];
		for (const struct rc_line *r = rows_from(rp->lines, rp->nlines, bl->lo);
		     r < end && r->lo < bl->hi; r++) {
			if (r->line <= 0 || !same_file(r->file, file))
				continue;
			if (!*min || r->line < *min)
				*min = r->line;
			if (r->line > *max)
				*max = r->line;
		}
	}
}

#define RC_MAX_VIEW_CHECKS 16

/* A loop statement without a condition (for (;;), while (1)) has no compare: what closes
 * an iteration is a test of its body, with the body's line. gcc still marks the statement
 * with a row without code (a location view) in that block before the branch: a line above
 * the branch's, after its function's declaration (not the tail of a function inlined
 * before it), of its file and inlined frame, names the loop (the nearest such line) when
 * no instruction of the loop has that line; failing that, the loop's lowest line (the
 * statement's own increment, `for (i = 0;; i++)`) unless the loop is named at its bottom
 * (a do-while, whose body lines are above its `while`). NULL when there is none. */
static const struct rc_line *codeless_statement(struct rc_proc *rp, const struct rc_loops *loops,
						const struct cp_loop *lp,
						const struct line_pick *pick)
{
	if (!rp->nviews)
		return NULL;
	const struct rc_line *best = NULL, *lowest = NULL, *end = rp->views + rp->nviews;
	int32_t frame = rc_seg_find(rp->inl_segs, rp->ninl_segs, pick->ln->lo);
	int floor = frame_decl_line(rp, frame, pick->ln->file), min, max;
	loop_line_bounds(rp, loops, lp, pick->ln->file, &min, &max);
	int checks = 0; /* passes over the loop's code */
	for (const struct rc_line *v = rows_from(rp->views, rp->nviews, pick->block);
	     v < end && v->lo <= pick->at && checks < RC_MAX_VIEW_CHECKS; v++) {
		if (v->line >= pick->ln->line || v->line <= floor ||
		    (best && v->line <= best->line) || !same_file(v->file, pick->ln->file) ||
		    rc_seg_find(rp->inl_segs, rp->ninl_segs, v->lo) != frame)
			continue;
		if (v->line == min && pick->ln->line < max)
			lowest = v;
		else if (checks++, !loop_has_line(rp, loops, lp, v->file, v->line))
			best = v;
	}
	return best ? best : lowest;
}

/* The line of a loop's for/while/do statement. gcc and clang give it to the
 * compare-and-branch that closes an iteration (at the bottom of a rotated loop), in
 * order of preference:
 *  4. a conditional back edge's branch (the loop's own, not a nested loop's exit test);
 *  3. the exit test (a loop tested at the top and closed by a plain jump);
 *  2. an unconditional back edge's jump;
 *  1. a nested loop's exit test that is also a back edge of this loop;
 * among equals the one at the highest address (the bottom). Only instructions with a line
 * inside the loop's inlined frame count (the line is then given in the frame's file).
 * Failing all, the header's line. Two shapes hide the line elsewhere: see
 * remainder_test and codeless_statement. */
const struct rc_line *rc_loop_line(struct rc_proc *rp, const struct rc_loops *loops,
				   const struct cp_loop *lp, int32_t home)
{
	const struct cp_cfg *cfg = &loops->cfg;
	const struct cp_loop_nest *nest = &loops->nest;
	int32_t self = (int32_t)(lp - nest->loops);
	struct line_pick pick = {NULL, 0, 0, 0};
	for (uint32_t i = 0; i < lp->nbacks; i++) {
		const struct cp_cfg_edge *e = &cfg->edges[nest->edges[lp->first_back + i]];
		bool own = nest->block_loop[e->src] == self;
		int rank = is_cond(e) ? (own ? 4 : 1) : e->kind == CP_CFG_JUMP && own ? 2 : 0;
		if (rank)
			consider(rp, home, &cfg->blocks[e->src], rank, &pick);
	}
	uint32_t test = pick.rank < 4 ? exit_test(loops, lp) : CP_CFG_NONE;
	if (test != CP_CFG_NONE)
		consider(rp, home, &cfg->blocks[test], 3, &pick);
	if (!pick.ln)
		return header_line(rp, nest, lp);
	const struct rc_line *better = NULL;
	if (pick.rank == 4)
		better = remainder_test(rp, loops, lp, &pick, home);
	if (!better && pick.rank >= 3)
		better = codeless_statement(rp, loops, lp, &pick);
	return better ? better : pick.ln;
}
