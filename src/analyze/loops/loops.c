/* The loop nesting forest by recursive SCC decomposition: see loops.h. */
#include "analyze/loops/loops-internal.h"
#include "base/xalloc.h"

#include <stdlib.h>
#include <string.h>

#define UNVISITED UINT32_MAX

void cp_loop_nest_init(struct cp_loop_nest *n)
{
	memset(n, 0, sizeof(*n));
}

void cp_loop_nest_release(struct cp_loop_nest *n)
{
	if (n->scratch) {
		cp_loops_scratch_free(n->scratch);
		free(n->scratch);
	}
	free(n->loops);
	free(n->blocks);
	free(n->ranges);
	free(n->edges);
	free(n->children);
	free(n->block_loop);
	free(n->idom);
	cp_loop_nest_init(n);
}

static uint32_t push_u32(uint32_t **a, size_t *len, size_t *alloc, uint32_t v)
{
	XGROW(*a, *len + 1, *alloc);
	(*a)[*len] = v;
	return (uint32_t)(*len)++;
}

static void push_region(struct cp_loops_scratch *s, int32_t parent, const uint32_t *blocks,
			uint32_t nblocks)
{
	if (!nblocks)
		return;
	XGROW(s->region_pool, s->nregion_pool + nblocks, s->region_pool_alloc);
	memcpy(s->region_pool + s->nregion_pool, blocks, nblocks * sizeof(*blocks));
	XGROW(s->regions, s->nregions + 1, s->regions_alloc);
	s->regions[s->nregions++] =
	    (struct cp_loops_region){(uint32_t)s->nregion_pool, nblocks, parent};
	s->nregion_pool += nblocks;
}

static int u32_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

static bool in_scc(const struct cp_loops_scratch *s, uint32_t v, uint32_t stamp)
{
	return v != CP_CFG_NONE && s->scc_stamp[v] == stamp;
}

/* Entry blocks of the SCC: a predecessor outside it, or an edge from the virtual root.
 * Appended, sorted, to the block pool. */
static void loop_headers(struct cp_loop_nest *n, const struct cp_cfg *cfg, struct cp_loop *L,
			 uint32_t stamp)
{
	struct cp_loops_scratch *s = n->scratch;
	L->first_header = (uint32_t)s->nblk;
	for (uint32_t i = 0; i < L->nblocks; i++) {
		uint32_t v = n->blocks[L->first_block + i];
		bool entry = s->is_root[v];
		for (uint32_t p = s->pred_first[v]; p < s->pred_first[v + 1] && !entry; p++)
			entry = !in_scc(s, cfg->edges[s->pred_edge[p]].src, stamp);
		if (entry)
			push_u32(&n->blocks, &s->nblk, &n->blocks_alloc, v);
	}
	L->nheaders = (uint32_t)(s->nblk - L->first_header);
	if (!L->nheaders) /* cannot happen: the root reaches every block; stay safe */
		L->nheaders = 1,
		push_u32(&n->blocks, &s->nblk, &n->blocks_alloc, n->blocks[L->first_block]);
}

/* a dominates b, in O(1) from the dominator-tree intervals. */
static bool dominates(const struct cp_loops_scratch *s, uint32_t a, uint32_t b)
{
	return s->dom_pre[a] <= s->dom_pre[b] && s->dom_post[b] <= s->dom_post[a];
}

/* Entry, back and exit edges. Back edges are removed from the graph for inner loops. */
static void loop_edges(struct cp_loop_nest *n, const struct cp_cfg *cfg, struct cp_loop *L,
		       uint32_t stamp)
{
	struct cp_loops_scratch *s = n->scratch;
	for (int pass = 0; pass < 2; pass++) {
		size_t first = s->nedg;
		for (uint32_t h = 0; h < L->nheaders; h++) {
			uint32_t v = n->blocks[L->first_header + h];
			for (uint32_t p = s->pred_first[v]; p < s->pred_first[v + 1]; p++) {
				uint32_t e = s->pred_edge[p];
				bool inside = in_scc(s, cfg->edges[e].src, stamp);
				if (inside != (pass == 1))
					continue;
				push_u32(&n->edges, &s->nedg, &n->edges_alloc, e);
				if (!inside)
					continue;
				s->removed[e] = 1;
				if (!dominates(s, v, cfg->edges[e].src))
					L->flags |= CP_LOOP_IRREDUCIBLE;
			}
		}
		if (s->nedg - first > 1)
			qsort(n->edges + first, s->nedg - first, sizeof(uint32_t), u32_cmp);
		if (pass == 0)
			L->first_entry = (uint32_t)first, L->nentries = (uint32_t)(s->nedg - first);
		else
			L->first_back = (uint32_t)first, L->nbacks = (uint32_t)(s->nedg - first);
	}
	L->first_exit = (uint32_t)s->nedg;
	for (uint32_t i = 0; i < L->nblocks; i++) {
		const struct cp_cfg_block *b = &cfg->blocks[n->blocks[L->first_block + i]];
		for (uint32_t k = 0; k < b->nedges; k++)
			if (!in_scc(s, cfg->edges[b->first_edge + k].dst, stamp))
				push_u32(&n->edges, &s->nedg, &n->edges_alloc, b->first_edge + k);
	}
	L->nexits = (uint32_t)(s->nedg - L->first_exit);
}

static void loop_ranges(struct cp_loop_nest *n, const struct cp_cfg *cfg, struct cp_loop *L)
{
	struct cp_loops_scratch *s = n->scratch;
	L->first_range = (uint32_t)s->nrng;
	for (uint32_t i = 0; i < L->nblocks; i++) {
		const struct cp_cfg_block *b = &cfg->blocks[n->blocks[L->first_block + i]];
		if (s->nrng > L->first_range && n->ranges[s->nrng - 1].hi >= b->lo) {
			if (b->hi > n->ranges[s->nrng - 1].hi)
				n->ranges[s->nrng - 1].hi = b->hi;
			continue;
		}
		XGROW(n->ranges, s->nrng + 1, n->ranges_alloc);
		n->ranges[s->nrng++] = (struct cp_loop_range){b->lo, b->hi};
	}
	L->nranges = (uint32_t)(s->nrng - L->first_range);
}

/* One non-trivial SCC scc[0..k) inside region parent becomes a loop; its body becomes a
 * region to decompose further. */
static void make_loop(struct cp_loop_nest *n, const struct cp_cfg *cfg, uint32_t *scc, uint32_t k,
		      int32_t parent)
{
	struct cp_loops_scratch *s = n->scratch;
	uint32_t stamp = ++s->stamp;
	struct cp_loop L = {.parent = parent, .depth = parent < 0 ? 1 : n->loops[parent].depth + 1};

	qsort(scc, k, sizeof(*scc), u32_cmp);
	L.first_block = (uint32_t)s->nblk;
	L.nblocks = k;
	for (uint32_t i = 0; i < k; i++) {
		s->scc_stamp[scc[i]] = stamp;
		push_u32(&n->blocks, &s->nblk, &n->blocks_alloc, scc[i]);
	}
	loop_headers(n, cfg, &L, stamp);
	L.header_block = n->blocks[L.first_header];
	L.header = cfg->blocks[L.header_block].lo;
	if (L.nheaders > 1)
		L.flags |= CP_LOOP_IRREDUCIBLE;
	if (cfg->entry == CP_CFG_NONE || !dominates(s, cfg->entry, L.header_block))
		L.flags |= CP_LOOP_UNREACHABLE;
	for (uint32_t h = 0; h < L.nheaders; h++)
		if (n->blocks[L.first_header + h] == cfg->entry)
			L.entered_at_start = true;
	loop_edges(n, cfg, &L, stamp);
	loop_ranges(n, cfg, &L);
	if (L.depth >= CP_LOOPS_MAX_DEPTH)
		L.flags |= CP_LOOP_TRUNCATED; /* bounded work: its inner cycles stay in it */
	XGROW(n->loops, n->nloops + 1, n->loops_alloc);
	n->loops[n->nloops++] = L;
	if (!(L.flags & CP_LOOP_TRUNCATED))
		push_region(s, (int32_t)(n->nloops - 1), n->blocks + L.first_block, k);
}

static bool self_loop(const struct cp_loops_scratch *s, const struct cp_cfg *cfg, uint32_t v)
{
	const struct cp_cfg_block *b = &cfg->blocks[v];
	for (uint32_t k = 0; k < b->nedges; k++)
		if (cfg->edges[b->first_edge + k].dst == v && !s->removed[b->first_edge + k])
			return true;
	return false;
}

/* Closes the SCC rooted at v when v is its root (Tarjan). */
static void tarjan_close(struct cp_loop_nest *n, const struct cp_cfg *cfg, uint32_t v, size_t *tsp,
			 int32_t parent)
{
	struct cp_loops_scratch *s = n->scratch;
	if (s->t_low[v] != s->t_index[v])
		return;
	size_t j = *tsp;
	do
		s->t_onstack[s->t_stack[--j]] = 0;
	while (s->t_stack[j] != v);
	uint32_t k = (uint32_t)(*tsp - j);
	if (k > 1 || self_loop(s, cfg, v))
		make_loop(n, cfg, s->t_stack + j, k, parent);
	*tsp = j;
}

/* Tarjan's SCC algorithm, iteratively, from v over the edges inside region stamp rs. */
static void tarjan(struct cp_loop_nest *n, const struct cp_cfg *cfg, uint32_t v0, uint32_t rs,
		   uint32_t *counter, int32_t parent)
{
	struct cp_loops_scratch *s = n->scratch;
	size_t sp = 0, tsp = 0;
	s->stack_v[sp] = v0, s->stack_e[sp++] = 0;
	s->t_index[v0] = s->t_low[v0] = (*counter)++;
	s->t_stack[tsp++] = v0, s->t_onstack[v0] = 1;
	while (sp) {
		uint32_t v = s->stack_v[sp - 1];
		const struct cp_cfg_block *b = &cfg->blocks[v];
		if (s->stack_e[sp - 1] < b->nedges) {
			uint32_t e = b->first_edge + s->stack_e[sp - 1]++, w = cfg->edges[e].dst;
			if (w == CP_CFG_NONE || s->region_stamp[w] != rs || s->removed[e])
				continue;
			if (s->t_index[w] == UNVISITED) {
				s->t_index[w] = s->t_low[w] = (*counter)++;
				s->t_stack[tsp++] = w, s->t_onstack[w] = 1;
				s->stack_v[sp] = w, s->stack_e[sp++] = 0;
			} else if (s->t_onstack[w] && s->t_index[w] < s->t_low[v]) {
				s->t_low[v] = s->t_index[w];
			}
			continue;
		}
		sp--;
		tarjan_close(n, cfg, v, &tsp, parent);
		if (sp && s->t_low[v] < s->t_low[s->stack_v[sp - 1]])
			s->t_low[s->stack_v[sp - 1]] = s->t_low[v];
	}
}

static void decompose(struct cp_loop_nest *n, const struct cp_cfg *cfg, size_t r)
{
	struct cp_loops_scratch *s = n->scratch;
	struct cp_loops_region reg = s->regions[r];
	uint32_t rs = ++s->stamp, counter = 0;
	for (uint32_t i = 0; i < reg.n; i++) {
		uint32_t v = s->region_pool[reg.first + i];
		s->region_stamp[v] = rs;
		s->t_index[v] = UNVISITED;
		s->t_onstack[v] = 0;
	}
	for (uint32_t i = 0; i < reg.n; i++) {
		uint32_t v = s->region_pool[reg.first + i];
		if (s->t_index[v] == UNVISITED)
			tarjan(n, cfg, v, rs, &counter, reg.parent);
	}
}

int cp_loops_find(struct cp_loop_nest *n, const struct cp_cfg *cfg)
{
	if (!n->scratch)
		n->scratch = xcalloc(1, sizeof(*n->scratch));
	struct cp_loops_scratch *s = n->scratch;
	cp_loops_scratch_fit(s, cfg);
	n->nloops = n->nirreducible = 0;
	s->nblk = s->nrng = s->nedg = s->nchild = 0;
	s->nregions = s->nregion_pool = 0;
	memset(s->removed, 0, cfg->nedges + 1);
	cp_loops_dominators(s, cfg);

	for (uint32_t v = 0; v < cfg->nblocks; v++)
		s->order[v] = v;
	push_region(s, -1, s->order, (uint32_t)cfg->nblocks);
	/* regions grow while they are decomposed; index, not pointer */
	for (size_t r = 0; r < s->nregions; r++)
		decompose(n, cfg, r);
	cp_loops_order(n, cfg);
	return 0;
}

bool cp_loops_dominates(const struct cp_loop_nest *n, uint32_t a, uint32_t b)
{
	while (b != CP_CFG_NONE) {
		if (b == a)
			return true;
		b = n->idom[b];
	}
	return false;
}
