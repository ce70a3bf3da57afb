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
	uint64_t at;
	int rank;
};

/* Keeps the instruction at `at` when it has a line in the loop's frame and outranks the
 * current pick (rank, then the higher address: the bottom of the loop). */
static void consider(const struct rc_proc *rp, int32_t home, uint64_t at, int rank,
		     struct line_pick *pick)
{
	if (rank < pick->rank || (rank == pick->rank && at <= pick->at))
		return;
	const struct rc_line *ln = rc_line_find(rp->lines, rp->nlines, at);
	if (!ln || ln->line <= 0 || !ln->file ||
	    !in_frame(rp, rc_seg_find(rp->inl_segs, rp->ninl_segs, at), home))
		return;
	*pick = (struct line_pick){ln, at, rank};
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

/* The first line row ending after addr (rows are sorted and disjoint). */
static const struct rc_line *row_from(const struct rc_proc *rp, uint64_t addr)
{
	size_t lo = 0, hi = rp->nlines;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (rp->lines[mid].hi <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return rp->lines + lo;
}

/* True when every line row of the loop's code is line `ln` or line 0. */
static bool one_line(const struct rc_proc *rp, const struct cp_loop_nest *nest,
		     const struct cp_cfg *cfg, const struct cp_loop *lp, const struct rc_line *ln)
{
	const struct rc_line *end = rp->lines + rp->nlines;
	for (uint32_t i = 0; i < lp->nblocks; i++) {
		const struct cp_cfg_block *bl = &cfg->blocks[nest->blocks[lp->first_block + i]];
		for (const struct rc_line *r = row_from(rp, bl->lo); r < end && r->lo < bl->hi; r++)
			if (r->line > 0 && (r->line != ln->line || !same_file(r->file, ln->file)))
				return false;
	}
	return true;
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
	if (lp->nchildren || !one_line(rp, nest, cfg, lp, pick->ln))
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
			    cond ? row_from(rp, cfg->blocks[o->dst].lo) : NULL;
			remainder |= r && r < rp->lines + rp->nlines &&
				     r->lo == cfg->blocks[o->dst].lo && r->line == pick->ln->line &&
				     same_file(r->file, pick->ln->file);
		}
		struct line_pick test = {NULL, 0, 0};
		if (cond && remainder)
			consider(rp, home, x->last, 1, &test);
		if (test.ln && test.ln->line != pick->ln->line &&
		    same_file(test.ln->file, pick->ln->file))
			return test.ln;
	}
	return NULL;
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
 * Failing all, the header's line. A vectorised loop: see remainder_test. */
const struct rc_line *rc_loop_line(const struct rc_proc *rp, const struct rc_loops *loops,
				   const struct cp_loop *lp, int32_t home)
{
	const struct cp_cfg *cfg = &loops->cfg;
	const struct cp_loop_nest *nest = &loops->nest;
	int32_t self = (int32_t)(lp - nest->loops);
	struct line_pick pick = {NULL, 0, 0};
	for (uint32_t i = 0; i < lp->nbacks; i++) {
		const struct cp_cfg_edge *e = &cfg->edges[nest->edges[lp->first_back + i]];
		bool own = nest->block_loop[e->src] == self;
		int rank = is_cond(e) ? (own ? 4 : 1) : e->kind == CP_CFG_JUMP && own ? 2 : 0;
		if (rank)
			consider(rp, home, cfg->blocks[e->src].last, rank, &pick);
	}
	uint32_t test = pick.rank < 4 ? exit_test(loops, lp) : CP_CFG_NONE;
	if (test != CP_CFG_NONE)
		consider(rp, home, cfg->blocks[test].last, 3, &pick);
	const struct rc_line *rest =
	    pick.rank == 4 ? remainder_test(rp, loops, lp, &pick, home) : NULL;
	if (rest)
		return rest;
	return pick.ln ? pick.ln : header_line(rp, nest, lp);
}
