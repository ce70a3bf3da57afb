/* Loop nests of one procedure's CFG (Paradyn §4): dominators, back edges, natural loops
 * (loops sharing a header are one loop), their nesting, and the instrumentation points of
 * every loop: entry edges, exit edges, back edges (iteration points).
 *
 * Method: the loop nesting forest by recursive strongly-connected-component
 * decomposition (Havlak/Steensgaard style). Each non-trivial SCC of the (remaining) graph
 * is a loop; its entries are its blocks with a predecessor outside it. One entry that
 * dominates the SCC: a natural (reducible) loop whose header is that entry, and the edges
 * from inside to it are its back edges (target dominates source). More entries: an
 * IRREDUCIBLE region, reported as a loop with CP_LOOP_IRREDUCIBLE whose headers are all
 * its entries (header = the lowest-addressed one) and whose "back edges" are the
 * retreating edges into them. Removing the back edges and repeating inside each SCC gives
 * the inner loops. For reducible code this equals the classic natural-loop nest.
 *
 * Blocks unreachable from the entry (targets of unresolved jumps) are still analysed: a
 * virtual root reaches them, so their loops are found too (flag CP_LOOP_UNREACHABLE).
 *
 * Usage (reuse one nest across procedures):
 *   struct cp_loop_nest n; cp_loop_nest_init(&n);
 *   cp_loops_find(&n, &cfg); ... n.loops[i] ...; cp_loop_nest_release(&n);
 * See docs/internals/cfg.md. */
#ifndef CP_ANALYZE_LOOPS_H
#define CP_ANALYZE_LOOPS_H

#include "analyze/cfg/cfg.h"

#include <stddef.h>
#include <stdint.h>

/* Loops nested deeper are not decomposed further (bounded work and memory on hostile
 * input: the cost is O(blocks x depth)); real code nests a few levels. */
#define CP_LOOPS_MAX_DEPTH 128

enum {
	CP_LOOP_IRREDUCIBLE = 1 << 0, /* several entries (headers) */
	CP_LOOP_UNREACHABLE = 1 << 1, /* not reachable from the procedure entry */
	CP_LOOP_TRUNCATED = 1 << 2,   /* at depth CP_LOOPS_MAX_DEPTH: loops nested inside it
				       * are not separated out */
};

struct cp_loop_range {
	uint64_t lo, hi;
};

struct cp_loop {
	uint64_t header;       /* address of the header block (lowest entry if irreducible) */
	uint32_t header_block; /* its block index in the cfg */
	int32_t parent;	       /* index in nest.loops, -1 for an outermost loop */
	uint32_t depth;	       /* 1 = outermost */
	uint32_t flags;	       /* CP_LOOP_* */
	/* Slices of the nest's pools (index, count): */
	uint32_t first_block, nblocks;	 /* nest.blocks: all its blocks, nested loops'
					  * included, sorted by address */
	uint32_t first_range, nranges;	 /* nest.ranges: its blocks' address ranges,
					  * adjacent blocks merged, sorted */
	uint32_t first_header, nheaders; /* nest.blocks: header blocks (1 unless
					  * irreducible), sorted by address */
	uint32_t first_entry, nentries;	 /* nest.edges: cfg edge indices from outside into
					  * a header (the procedure entry, when it is a
					  * header, has no edge: see entered_at_start) */
	uint32_t first_exit, nexits;	 /* nest.edges: edges from inside to outside the
					  * loop, including edges leaving the procedure
					  * (return, tail call, no-return call, unresolved) */
	uint32_t first_back, nbacks;	 /* nest.edges: edges from inside to a header
					  * (iteration points) */
	uint32_t first_child, nchildren; /* nest.children: indices of directly nested
					  * loops */
	bool entered_at_start;		 /* a header is the procedure's entry block */
};

struct cp_loop_nest {
	/* Parents before children (pre-order), siblings by header address. */
	struct cp_loop *loops;
	size_t nloops;
	uint32_t *blocks; /* pool: block indices */
	struct cp_loop_range *ranges;
	uint32_t *edges; /* pool: cfg edge indices */
	uint32_t *children;
	/* Per cfg block: innermost loop (index in loops) or -1; immediate dominator
	 * (CP_CFG_NONE for the entry and for blocks only the virtual root reaches). */
	int32_t *block_loop;
	uint32_t *idom;
	size_t nirreducible; /* loops flagged CP_LOOP_IRREDUCIBLE */

	/* private */
	size_t loops_alloc, blocks_alloc, ranges_alloc, edges_alloc, children_alloc, perblock_alloc;
	struct cp_loops_scratch *scratch;
};

void cp_loop_nest_init(struct cp_loop_nest *n);
void cp_loop_nest_release(struct cp_loop_nest *n);
/* Finds the loops of cfg. Replaces the previous contents of n. Returns 0 (no failure
 * mode besides running out of memory, which aborts as xalloc does). */
int cp_loops_find(struct cp_loop_nest *n, const struct cp_cfg *cfg);

/* True when block a dominates block b (by the idom tree of the last cp_loops_find). */
bool cp_loops_dominates(const struct cp_loop_nest *n, uint32_t a, uint32_t b);

#endif
