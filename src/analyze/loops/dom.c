/* Dominators of a procedure CFG: Cooper, Harvey & Kennedy's iterative algorithm ("A
 * Simple, Fast Dominance Algorithm", 2001) over reverse post-order. A virtual root (index
 * nblocks) reaches the entry first and then every block that is still unvisited (in
 * address order, blocks without predecessors first), so that code only reachable through
 * unresolved jumps still gets a dominator tree. */
#include "analyze/loops/loops-internal.h"
#include "base/xalloc.h"

#include <stdlib.h>
#include <string.h>

#define FIT(p, n) ((p) = xrealloc((p), (n) * sizeof(*(p))))

void cp_loops_scratch_fit(struct cp_loops_scratch *s, const struct cp_cfg *cfg)
{
	/* per-block arrays hold nblocks + 2 entries (virtual root, CSR end) */
	size_t nb = cfg->nblocks + 2, ne = cfg->nedges + 1;
	if (nb > s->nblocks_alloc) {
		nb = nb * 2;
		FIT(s->pred_first, nb + 1);
		FIT(s->rpo, nb);
		FIT(s->rpo_num, nb);
		FIT(s->idom, nb);
		FIT(s->is_root, nb);
		FIT(s->stack_v, nb);
		FIT(s->stack_e, nb);
		FIT(s->region_stamp, nb);
		FIT(s->scc_stamp, nb);
		FIT(s->t_index, nb);
		FIT(s->t_low, nb);
		FIT(s->t_stack, nb);
		FIT(s->t_onstack, nb);
		FIT(s->order, nb);
		FIT(s->dom_pre, nb);
		FIT(s->dom_post, nb);
		s->nblocks_alloc = nb;
		/* the stamps restart: clear them */
		memset(s->region_stamp, 0, nb * sizeof(*s->region_stamp));
		memset(s->scc_stamp, 0, nb * sizeof(*s->scc_stamp));
		s->stamp = 0;
	}
	if (ne > s->nedges_alloc) {
		ne = ne * 2;
		FIT(s->pred_edge, ne);
		FIT(s->removed, ne);
		s->nedges_alloc = ne;
	}
}

void cp_loops_scratch_free(struct cp_loops_scratch *s)
{
	void *arrays[] = {s->pred_first, s->rpo,       s->rpo_num,	s->idom,	s->is_root,
			  s->stack_v,	 s->stack_e,   s->region_stamp, s->scc_stamp,	s->t_index,
			  s->t_low,	 s->t_stack,   s->t_onstack,	s->order,	s->dom_pre,
			  s->dom_post,	 s->pred_edge, s->removed,	s->region_pool, s->regions};
	for (size_t i = 0; i < sizeof(arrays) / sizeof(arrays[0]); i++)
		free(arrays[i]);
	memset(s, 0, sizeof(*s));
}

static void build_preds(struct cp_loops_scratch *s, const struct cp_cfg *cfg)
{
	size_t n = cfg->nblocks;
	memset(s->pred_first, 0, (n + 2) * sizeof(*s->pred_first));
	for (size_t e = 0; e < cfg->nedges; e++)
		if (cfg->edges[e].dst != CP_CFG_NONE)
			s->pred_first[cfg->edges[e].dst + 2]++;
	for (size_t v = 0; v < n; v++)
		s->pred_first[v + 2] += s->pred_first[v + 1];
	for (size_t e = 0; e < cfg->nedges; e++) {
		uint32_t d = cfg->edges[e].dst;
		if (d != CP_CFG_NONE)
			s->pred_edge[s->pred_first[d + 1]++] = (uint32_t)e;
	}
}

/* Iterative DFS from root r; appends post-order into s->rpo[*npost...]. Visited blocks
 * have rpo_num != UINT32_MAX during the walk. */
static void dfs(struct cp_loops_scratch *s, const struct cp_cfg *cfg, uint32_t r, size_t *npost)
{
	size_t sp = 0;
	s->stack_v[sp] = r;
	s->stack_e[sp++] = 0;
	s->rpo_num[r] = 0;
	while (sp) {
		uint32_t v = s->stack_v[sp - 1];
		const struct cp_cfg_block *b = &cfg->blocks[v];
		if (s->stack_e[sp - 1] < b->nedges) {
			uint32_t w = cfg->edges[b->first_edge + s->stack_e[sp - 1]++].dst;
			if (w != CP_CFG_NONE && s->rpo_num[w] == UINT32_MAX) {
				s->rpo_num[w] = 0;
				s->stack_v[sp] = w;
				s->stack_e[sp++] = 0;
			}
			continue;
		}
		s->rpo[(*npost)++] = v;
		sp--;
	}
}

static void depth_first_order(struct cp_loops_scratch *s, const struct cp_cfg *cfg)
{
	size_t n = cfg->nblocks, npost = 0;
	for (size_t v = 0; v < n; v++)
		s->rpo_num[v] = UINT32_MAX;
	memset(s->is_root, 0, n);
	if (cfg->entry != CP_CFG_NONE) {
		s->is_root[cfg->entry] = 1;
		dfs(s, cfg, cfg->entry, &npost);
	}
	for (int pass = 0; pass < 2; pass++)
		for (uint32_t v = 0; v < n; v++) {
			bool nopreds = s->pred_first[v] == s->pred_first[v + 1];
			if (s->rpo_num[v] != UINT32_MAX || (pass == 0 && !nopreds))
				continue;
			s->is_root[v] = 1;
			dfs(s, cfg, v, &npost);
		}
	/* post-order -> reverse post-order; numbers start at 1 (0 is the root) */
	for (size_t i = 0; i < n / 2; i++) {
		uint32_t t = s->rpo[i];
		s->rpo[i] = s->rpo[n - 1 - i];
		s->rpo[n - 1 - i] = t;
	}
	for (size_t i = 0; i < n; i++)
		s->rpo_num[s->rpo[i]] = (uint32_t)i + 1;
	s->rpo_num[n] = 0;
}

static uint32_t intersect(const struct cp_loops_scratch *s, uint32_t a, uint32_t b)
{
	while (a != b) {
		while (s->rpo_num[a] > s->rpo_num[b])
			a = s->idom[a];
		while (s->rpo_num[b] > s->rpo_num[a])
			b = s->idom[b];
	}
	return a;
}

/* Pre/post numbers of a DFS over the dominator tree (root = the virtual root): a
 * dominates b iff pre[a] <= pre[b] and post[b] <= post[a]. Children lists are built in
 * t_index/t_low, which Tarjan reinitialises before use. */
static void number_dom_tree(struct cp_loops_scratch *s, uint32_t n)
{
	uint32_t *first = s->t_index, *list = s->t_low, root = n, clock = 0;
	memset(first, 0, (n + 2) * sizeof(*first));
	for (uint32_t v = 0; v < n; v++)
		first[s->idom[v] + 1]++;
	for (uint32_t v = 0; v <= n; v++)
		first[v + 1] += first[v];
	for (uint32_t v = 0; v < n; v++)
		list[first[s->idom[v]]++] = v;
	for (uint32_t v = n + 1; v > 0; v--) /* first[v] = start of v's children again */
		first[v] = first[v - 1];
	first[0] = 0;
	size_t sp = 0;
	s->stack_v[sp] = root, s->stack_e[sp++] = first[root];
	s->dom_pre[root] = clock++;
	while (sp) {
		uint32_t v = s->stack_v[sp - 1];
		if (s->stack_e[sp - 1] < first[v + 1]) {
			uint32_t w = list[s->stack_e[sp - 1]++];
			s->dom_pre[w] = clock++;
			s->stack_v[sp] = w, s->stack_e[sp++] = first[w];
			continue;
		}
		s->dom_post[v] = clock++;
		sp--;
	}
}

void cp_loops_dominators(struct cp_loops_scratch *s, const struct cp_cfg *cfg)
{
	uint32_t n = (uint32_t)cfg->nblocks, root = n;
	build_preds(s, cfg);
	depth_first_order(s, cfg);
	for (uint32_t v = 0; v <= n; v++)
		s->idom[v] = UINT32_MAX;
	s->idom[root] = root;
	for (bool changed = true; changed;) {
		changed = false;
		for (uint32_t i = 0; i < n; i++) {
			uint32_t v = s->rpo[i], nd = s->is_root[v] ? root : UINT32_MAX;
			for (uint32_t k = s->pred_first[v]; k < s->pred_first[v + 1]; k++) {
				uint32_t p = cfg->edges[s->pred_edge[k]].src;
				if (s->idom[p] == UINT32_MAX)
					continue;
				nd = nd == UINT32_MAX ? p : intersect(s, p, nd);
			}
			if (nd != s->idom[v]) {
				s->idom[v] = nd;
				changed = true;
			}
		}
	}
	number_dom_tree(s, n);
}
