/* Final layout of a loop nest: loops in pre-order (parents first, siblings by header
 * address), depths, children lists, innermost loop and immediate dominator per block. */
#include "analyze/loops/loops-internal.h"
#include "base/xalloc.h"

#include <stdlib.h>
#include <string.h>

/* qsort_r (not a global): structure recovery may run on several threads */
static int child_cmp(const void *a, const void *b, void *loops)
{
	const struct cp_loop *x = &((const struct cp_loop *)loops)[*(const uint32_t *)a];
	const struct cp_loop *y = &((const struct cp_loop *)loops)[*(const uint32_t *)b];
	return x->header < y->header ? -1 : x->header > y->header;
}

/* Children of every loop (old indices), grouped by parent: CSR in first[]/list[]; the
 * roots are the group of index nloops. */
static void group_children(const struct cp_loop_nest *n, uint32_t *first, uint32_t *list)
{
	size_t L = n->nloops;
	memset(first, 0, (L + 2) * sizeof(*first));
	for (size_t i = 0; i < L; i++) {
		size_t p = n->loops[i].parent < 0 ? L : (size_t)n->loops[i].parent;
		first[p + 1]++;
	}
	for (size_t p = 0; p <= L; p++)
		first[p + 1] += first[p];
	for (size_t i = 0; i < L; i++) {
		size_t p = n->loops[i].parent < 0 ? L : (size_t)n->loops[i].parent;
		list[first[p]++] = (uint32_t)i;
	}
	for (size_t p = L + 1; p > 0; p--) /* shift back: first[p] = start of group p */
		first[p] = first[p - 1];
	first[0] = 0;
	for (size_t p = 0; p <= L; p++)
		qsort_r(list + first[p], first[p + 1] - first[p], sizeof(*list), child_cmp,
			n->loops);
}

static void renumber(struct cp_loop_nest *n, const uint32_t *first, const uint32_t *list,
		     uint32_t *stack, uint32_t *newidx, uint32_t *oldof, struct cp_loop *out)
{
	struct cp_loops_scratch *s = n->scratch;
	size_t L = n->nloops, sp = 0, k = 0;
	for (uint32_t c = first[L + 1]; c > first[L]; c--)
		stack[sp++] = list[c - 1];
	while (sp) {
		uint32_t old = stack[--sp];
		newidx[old] = (uint32_t)k;
		oldof[k] = old;
		out[k++] = n->loops[old];
		for (uint32_t c = first[old + 1]; c > first[old]; c--)
			stack[sp++] = list[c - 1];
	}
	for (size_t i = 0; i < L; i++) {
		struct cp_loop *lp = &out[i];
		uint32_t old = oldof[i];
		lp->first_child = (uint32_t)s->nchild;
		lp->nchildren = first[old + 1] - first[old];
		for (uint32_t c = first[old]; c < first[old + 1]; c++) {
			XGROW(n->children, s->nchild + 1, n->children_alloc);
			n->children[s->nchild++] = newidx[list[c]];
		}
		if (lp->parent >= 0)
			lp->parent = (int32_t)newidx[lp->parent];
		lp->depth = lp->parent < 0 ? 1 : out[lp->parent].depth + 1;
	}
}

static void per_block(struct cp_loop_nest *n, const struct cp_cfg *cfg)
{
	struct cp_loops_scratch *s = n->scratch;
	size_t nb = cfg->nblocks;
	if (nb > n->perblock_alloc) {
		n->perblock_alloc = nb * 2;
		n->block_loop = xrealloc(n->block_loop, n->perblock_alloc * sizeof(*n->block_loop));
		n->idom = xrealloc(n->idom, n->perblock_alloc * sizeof(*n->idom));
	}
	for (size_t v = 0; v < nb; v++) {
		n->block_loop[v] = -1;
		n->idom[v] = s->idom[v] == nb ? CP_CFG_NONE : s->idom[v];
	}
	for (size_t i = 0; i < n->nloops; i++) {
		const struct cp_loop *lp = &n->loops[i];
		for (uint32_t k = 0; k < lp->nblocks; k++)
			n->block_loop[n->blocks[lp->first_block + k]] = (int32_t)i;
		if (lp->flags & CP_LOOP_IRREDUCIBLE)
			n->nirreducible++;
	}
}

void cp_loops_order(struct cp_loop_nest *n, const struct cp_cfg *cfg)
{
	struct cp_loops_scratch *s = n->scratch;
	if (n->nloops) {
		struct cp_loop *out = xmalloc(n->nloops * sizeof(*out));
		group_children(n, s->t_index, s->t_low);
		renumber(n, s->t_index, s->t_low, s->stack_v, s->order, s->stack_e, out);
		memcpy(n->loops, out, n->nloops * sizeof(*out));
		free(out);
	}
	per_block(n, cfg);
}
