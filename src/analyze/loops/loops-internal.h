/* Private to src/analyze/loops: reusable scratch arrays. */
#ifndef CP_ANALYZE_LOOPS_INTERNAL_H
#define CP_ANALYZE_LOOPS_INTERNAL_H

#include "analyze/loops/loops.h"

#include <stdint.h>

/* A set of blocks still to be decomposed into SCCs: the body of loop `parent` (or, for
 * parent -1, the whole procedure). */
struct cp_loops_region {
	uint32_t first, n; /* slice of region_pool */
	int32_t parent;
};

struct cp_loops_scratch {
	size_t nblocks_alloc, nedges_alloc;
	/* per block (+1 for the virtual root, index nblocks) */
	uint32_t *pred_first;	     /* CSR of predecessors: pred_edge[pred_first[v]..[v+1]) */
	uint32_t *rpo;		     /* blocks in reverse post-order from the virtual root */
	uint32_t *rpo_num;	     /* position of each block in rpo */
	uint32_t *idom;		     /* immediate dominator, root = nblocks */
	uint8_t *is_root;	     /* an edge from the virtual root leads here */
	uint32_t *stack_v, *stack_e; /* DFS / Tarjan explicit stacks */
	uint32_t *region_stamp, *scc_stamp;
	uint32_t *t_index, *t_low, *t_stack;
	uint8_t *t_onstack;
	uint32_t *order;	      /* loop pre-order / remapping */
	uint32_t *dom_pre, *dom_post; /* dominator-tree DFS intervals: O(1) dominance */
	/* per edge */
	uint32_t *pred_edge;
	uint8_t *removed; /* back edges of loops found so far */
	/* regions */
	uint32_t *region_pool;
	size_t nregion_pool, region_pool_alloc;
	struct cp_loops_region *regions;
	size_t nregions, regions_alloc;
	uint32_t stamp;
	/* lengths of the nest's pools */
	size_t nblk, nrng, nedg, nchild;
};

/* Sizes the scratch arrays for cfg. */
void cp_loops_scratch_fit(struct cp_loops_scratch *s, const struct cp_cfg *cfg);
void cp_loops_scratch_free(struct cp_loops_scratch *s);
/* Predecessor lists, depth-first order from the virtual root (which reaches the entry,
 * then every block no other block reaches), and immediate dominators. */
void cp_loops_dominators(struct cp_loops_scratch *s, const struct cp_cfg *cfg);
/* Puts the loops found in pre-order and fills depths, children, block_loop, idom. */
void cp_loops_order(struct cp_loop_nest *n, const struct cp_cfg *cfg);

#endif
