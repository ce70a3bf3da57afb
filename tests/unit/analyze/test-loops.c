/* Loop nests: exact nests of the assembly fixtures, and random graphs checked against a
 * brute-force reference (dominators by reachability, natural loops by definition). */
#include "test-cfg-fixtures.h"
#include "analyze/loops/loops.h"

#include <stdio.h>
#include <stdlib.h>

struct fx {
	struct cp_cfg cfg;
	struct cp_loop_nest nest;
};

static int fx_setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	cp_cfg_init(&f->cfg);
	cp_loop_nest_init(&f->nest);
	*state = f;
	return 0;
}

static int fx_teardown(void **state)
{
	struct fx *f = *state;
	cp_cfg_release(&f->cfg);
	cp_loop_nest_release(&f->nest);
	free(f);
	return 0;
}

static void analyse(struct fx *f, const char *lo, const char *hi, const char *lo2, const char *hi2)
{
	fx_build(&f->cfg, lo, hi, lo2, hi2);
	assert_int_equal(cp_loops_find(&f->nest, &f->cfg), 0);
}

/* The loop's blocks are exactly the blocks starting at labels (sorted by address). */
static void expect_loop_blocks(const struct fx *f, const struct cp_loop *L,
			       const char *const *labels, size_t n)
{
	assert_int_equal(L->nblocks, n);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(f->nest.blocks[L->first_block + i], fx_block(&f->cfg, labels[i]));
}

/* slice[0..n) (edge indices) equals the given edges, in any order */
static void expect_edges(const uint32_t *slice, uint32_t n, const uint32_t *want, uint32_t nwant)
{
	assert_int_equal(n, nwant);
	for (uint32_t i = 0; i < nwant; i++) {
		bool found = false;
		for (uint32_t k = 0; k < n; k++)
			found |= slice[k] == want[i];
		assert_true(found);
	}
}

#define EDGES(f, L, one, many) ((f)->nest.edges + (L)->first_##one), (L)->n##many

static void test_nest3(void **state)
{
	struct fx *f = *state;
	analyse(f, fx_nest3, fx_nest3_end, NULL, NULL);
	const struct cp_cfg *cfg = &f->cfg;
	assert_int_equal(f->nest.nloops, 3);
	assert_int_equal(f->nest.nirreducible, 0);
	const struct cp_loop *L0 = &f->nest.loops[0], *L1 = &f->nest.loops[1],
			     *L2 = &f->nest.loops[2];
	assert_int_equal(L0->header, A(fx_nest3_outer));
	assert_int_equal(L1->header, A(fx_nest3_mid));
	assert_int_equal(L2->header, A(fx_nest3_inner));
	assert_int_equal(L0->depth, 1);
	assert_int_equal(L1->depth, 2);
	assert_int_equal(L2->depth, 3);
	assert_int_equal(L0->parent, -1);
	assert_int_equal(L1->parent, 0);
	assert_int_equal(L2->parent, 1);
	assert_int_equal(L0->nchildren, 1);
	assert_int_equal(f->nest.children[L0->first_child], 1);
	assert_int_equal(L2->nchildren, 0);
	for (int i = 0; i < 3; i++)
		assert_int_equal(f->nest.loops[i].flags, 0);

	const char *const b0[] = {fx_nest3_outer, fx_nest3_mid, fx_nest3_inner, fx_nest3_midlatch,
				  fx_nest3_outerlatch};
	expect_loop_blocks(f, L0, b0, 5);
	expect_loop_blocks(f, L1, b0 + 1, 3);
	expect_loop_blocks(f, L2, b0 + 2, 1);
	assert_int_equal(L0->nranges, 1);
	assert_int_equal(f->nest.ranges[L0->first_range].lo, A(fx_nest3_outer));
	assert_int_equal(f->nest.ranges[L0->first_range].hi, A(fx_nest3_exit));
	assert_int_equal(f->nest.ranges[L2->first_range].hi, A(fx_nest3_midlatch));

	uint32_t e0[] = {fx_edge(cfg, fx_nest3, fx_nest3_outer, CP_CFG_FALLTHROUGH)};
	uint32_t b0e[] = {fx_edge(cfg, fx_nest3_outerlatch, fx_nest3_outer, CP_CFG_COND_TAKEN)};
	uint32_t x0[] = {fx_edge(cfg, fx_nest3_outerlatch, fx_nest3_exit, CP_CFG_COND_NOT_TAKEN)};
	expect_edges(EDGES(f, L0, entry, entries), e0, 1);
	expect_edges(EDGES(f, L0, back, backs), b0e, 1);
	expect_edges(EDGES(f, L0, exit, exits), x0, 1);
	uint32_t e1[] = {fx_edge(cfg, fx_nest3_outer, fx_nest3_mid, CP_CFG_FALLTHROUGH)};
	uint32_t b1[] = {fx_edge(cfg, fx_nest3_midlatch, fx_nest3_mid, CP_CFG_COND_TAKEN)};
	uint32_t x1[] = {
	    fx_edge(cfg, fx_nest3_midlatch, fx_nest3_outerlatch, CP_CFG_COND_NOT_TAKEN)};
	expect_edges(EDGES(f, L1, entry, entries), e1, 1);
	expect_edges(EDGES(f, L1, back, backs), b1, 1);
	expect_edges(EDGES(f, L1, exit, exits), x1, 1);
	uint32_t e2[] = {fx_edge(cfg, fx_nest3_mid, fx_nest3_inner, CP_CFG_FALLTHROUGH)};
	uint32_t b2[] = {fx_edge(cfg, fx_nest3_inner, fx_nest3_inner, CP_CFG_COND_TAKEN)};
	uint32_t x2[] = {fx_edge(cfg, fx_nest3_inner, fx_nest3_midlatch, CP_CFG_COND_NOT_TAKEN)};
	expect_edges(EDGES(f, L2, entry, entries), e2, 1);
	expect_edges(EDGES(f, L2, back, backs), b2, 1);
	expect_edges(EDGES(f, L2, exit, exits), x2, 1);

	/* innermost loop per block, dominators */
	const int32_t inner[] = {-1, 0, 1, 2, 1, 0, -1};
	for (int i = 0; i < 7; i++)
		assert_int_equal(f->nest.block_loop[i], inner[i]);
	assert_int_equal(f->nest.idom[0], CP_CFG_NONE);
	assert_int_equal(f->nest.idom[fx_block(cfg, fx_nest3_exit)],
			 fx_block(cfg, fx_nest3_outerlatch));
	assert_true(cp_loops_dominates(&f->nest, 1, 5));
	assert_false(cp_loops_dominates(&f->nest, 5, 1));
}

static void test_two_back_edges_one_loop(void **state)
{
	struct fx *f = *state;
	analyse(f, fx_twoback, fx_twoback_end, NULL, NULL);
	const struct cp_cfg *cfg = &f->cfg;
	assert_int_equal(f->nest.nloops, 1);
	const struct cp_loop *L = &f->nest.loops[0];
	assert_int_equal(L->header, A(fx_twoback_head));
	assert_int_equal(L->flags, 0);
	const char *const blocks[] = {fx_twoback_head, fx_twoback_odd, fx_twoback_even};
	expect_loop_blocks(f, L, blocks, 3);
	assert_int_equal(L->nranges, 2); /* out1 sits between the arms */
	uint32_t back[] = {fx_edge(cfg, fx_twoback_odd, fx_twoback_head, CP_CFG_COND_TAKEN),
			   fx_edge(cfg, fx_twoback_even, fx_twoback_head, CP_CFG_COND_TAKEN)};
	uint32_t exits[] = {fx_edge(cfg, fx_twoback_odd, fx_twoback_out1, CP_CFG_COND_NOT_TAKEN),
			    fx_edge(cfg, fx_twoback_even, fx_twoback_out2, CP_CFG_COND_NOT_TAKEN)};
	uint32_t entries[] = {fx_edge(cfg, fx_twoback, fx_twoback_head, CP_CFG_FALLTHROUGH)};
	expect_edges(EDGES(f, L, back, backs), back, 2);
	expect_edges(EDGES(f, L, exit, exits), exits, 2);
	expect_edges(EDGES(f, L, entry, entries), entries, 1);
}

static void test_irreducible(void **state)
{
	struct fx *f = *state;
	analyse(f, fx_irred, fx_irred_end, NULL, NULL);
	const struct cp_cfg *cfg = &f->cfg;
	assert_int_equal(f->nest.nloops, 1);
	assert_int_equal(f->nest.nirreducible, 1);
	const struct cp_loop *L = &f->nest.loops[0];
	assert_true(L->flags & CP_LOOP_IRREDUCIBLE);
	assert_int_equal(L->header, A(fx_irred_a));
	assert_int_equal(L->nheaders, 2);
	assert_int_equal(f->nest.blocks[L->first_header], fx_block(cfg, fx_irred_a));
	assert_int_equal(f->nest.blocks[L->first_header + 1], fx_block(cfg, fx_irred_b));
	const char *const blocks[] = {fx_irred_a, fx_irred_b};
	expect_loop_blocks(f, L, blocks, 2);
	uint32_t entries[] = {fx_edge(cfg, fx_irred, fx_irred_b, CP_CFG_COND_TAKEN),
			      fx_edge(cfg, fx_irred, fx_irred_a, CP_CFG_COND_NOT_TAKEN)};
	uint32_t back[] = {fx_edge(cfg, fx_irred_b, fx_irred_a, CP_CFG_COND_TAKEN),
			   fx_edge(cfg, fx_irred_a, fx_irred_b, CP_CFG_FALLTHROUGH)};
	uint32_t exits[] = {fx_edge(cfg, fx_irred_b, fx_irred_exit, CP_CFG_COND_NOT_TAKEN)};
	expect_edges(EDGES(f, L, entry, entries), entries, 2);
	expect_edges(EDGES(f, L, back, backs), back, 2);
	expect_edges(EDGES(f, L, exit, exits), exits, 1);
	/* neither entry dominates the other */
	assert_false(
	    cp_loops_dominates(&f->nest, fx_block(cfg, fx_irred_a), fx_block(cfg, fx_irred_b)));
	assert_false(
	    cp_loops_dominates(&f->nest, fx_block(cfg, fx_irred_b), fx_block(cfg, fx_irred_a)));
}

static void test_switch_in_loop(void **state)
{
	struct fx *f = *state;
	analyse(f, fx_switch, fx_switch_end, NULL, NULL);
	const struct cp_cfg *cfg = &f->cfg;
	assert_int_equal(f->nest.nloops, 1);
	const struct cp_loop *L = &f->nest.loops[0];
	assert_int_equal(L->header, A(fx_switch_head));
	const char *const blocks[] = {fx_switch_head, fx_switch_dispatch, fx_switch_c0,
				      fx_switch_c1,   fx_switch_c2,	  fx_switch_default,
				      fx_switch_latch};
	expect_loop_blocks(f, L, blocks, 7);
	assert_int_equal(L->nranges, 1);
	uint32_t back[] = {fx_edge(cfg, fx_switch_latch, fx_switch_head, CP_CFG_COND_TAKEN)};
	uint32_t exits[] = {fx_edge(cfg, fx_switch_latch, fx_switch_exit, CP_CFG_COND_NOT_TAKEN)};
	expect_edges(EDGES(f, L, back, backs), back, 1);
	expect_edges(EDGES(f, L, exit, exits), exits, 1);
}

static void test_loop_entered_from_cold_part(void **state)
{
	struct fx *f = *state;
	analyse(f, fx_split, fx_split_end, fx_split_cold, fx_split_cold_end);
	const struct cp_cfg *cfg = &f->cfg;
	assert_int_equal(f->nest.nloops, 1);
	const struct cp_loop *L = &f->nest.loops[0];
	assert_int_equal(L->header, A(fx_split_loop));
	assert_int_equal(L->flags, 0);
	uint32_t entries[] = {fx_edge(cfg, fx_split, fx_split_loop, CP_CFG_COND_NOT_TAKEN),
			      fx_edge(cfg, fx_split_cold, fx_split_loop, CP_CFG_JUMP)};
	uint32_t back[] = {fx_edge(cfg, fx_split_loop, fx_split_loop, CP_CFG_COND_TAKEN)};
	uint32_t exits[] = {fx_edge(cfg, fx_split_loop, fx_split_ret, CP_CFG_COND_NOT_TAKEN)};
	expect_edges(EDGES(f, L, entry, entries), entries, 2);
	expect_edges(EDGES(f, L, back, backs), back, 1);
	expect_edges(EDGES(f, L, exit, exits), exits, 1);
}

static void test_no_loops(void **state)
{
	struct fx *f = *state;
	analyse(f, fx_noret, fx_noret_end, NULL, NULL);
	assert_int_equal(f->nest.nloops, 0);
	analyse(f, fx_tail, fx_tail_end, NULL, NULL);
	assert_int_equal(f->nest.nloops, 0);
	for (size_t i = 0; i < f->cfg.nblocks; i++)
		assert_int_equal(f->nest.block_loop[i], -1);
	/* an empty graph (a caller that skipped a failed build) */
	struct cp_cfg empty;
	cp_cfg_init(&empty);
	empty.entry = CP_CFG_NONE;
	assert_int_equal(cp_loops_find(&f->nest, &empty), 0);
	assert_int_equal(f->nest.nloops, 0);
}

/* ---- random graphs against a brute-force reference ---- */

#define MAXN 14

struct graph {
	int n;
	bool adj[MAXN][MAXN];
};

static void graph_to_cfg(const struct graph *g, struct cp_cfg *cfg)
{
	cfg->nblocks = cfg->nedges = 0;
	cfg->blocks = realloc(cfg->blocks, MAXN * sizeof(*cfg->blocks));
	cfg->edges = realloc(cfg->edges, MAXN * MAXN * sizeof(*cfg->edges));
	for (int v = 0; v < g->n; v++) {
		struct cp_cfg_block *b = &cfg->blocks[cfg->nblocks++];
		memset(b, 0, sizeof(*b));
		b->lo = 0x1000 + 16 * (uint64_t)v;
		b->hi = b->lo + 16;
		b->first_edge = (uint32_t)cfg->nedges;
		for (int w = 0; w < g->n; w++)
			if (g->adj[v][w])
				cfg->edges[cfg->nedges++] = (struct cp_cfg_edge){
				    (uint32_t)v, (uint32_t)w, 0x1000 + 16 * (uint64_t)w, 0};
		b->nedges = (uint32_t)(cfg->nedges - b->first_edge);
	}
	cfg->entry = 0;
}

/* nodes reachable from 0 without passing through `removed` (-1: none) */
static void reach(const struct graph *g, int removed, bool *seen)
{
	int stack[MAXN], sp = 0;
	memset(seen, 0, MAXN);
	if (removed == 0)
		return;
	seen[0] = true;
	stack[sp++] = 0;
	while (sp) {
		int v = stack[--sp];
		for (int w = 0; w < g->n; w++)
			if (g->adj[v][w] && !seen[w] && w != removed)
				seen[w] = true, stack[sp++] = w;
	}
}

/* natural loop body of header h: h plus nodes reaching a back-edge source without h */
static void natural_body(const struct graph *g, int h, const bool dom[MAXN][MAXN], bool *body)
{
	int stack[MAXN * MAXN], sp = 0;
	memset(body, 0, MAXN);
	body[h] = true;
	for (int u = 0; u < g->n; u++)
		if (g->adj[u][h] && dom[h][u] && !body[u])
			body[u] = true, stack[sp++] = u;
	while (sp) {
		int v = stack[--sp];
		for (int p = 0; p < g->n; p++)
			if (g->adj[p][v] && !body[p])
				body[p] = true, stack[sp++] = p;
	}
}

static bool is_reducible(const struct graph *g, const bool dom[MAXN][MAXN])
{
	/* without back edges the graph must be acyclic: Kahn's algorithm */
	int indeg[MAXN] = {0}, queue[MAXN], qh = 0, qt = 0, seen = 0;
	for (int u = 0; u < g->n; u++)
		for (int v = 0; v < g->n; v++)
			if (g->adj[u][v] && !dom[v][u])
				indeg[v]++;
	for (int v = 0; v < g->n; v++)
		if (!indeg[v])
			queue[qt++] = v;
	while (qh < qt) {
		int u = queue[qh++];
		seen++;
		for (int v = 0; v < g->n; v++)
			if (g->adj[u][v] && !dom[v][u] && --indeg[v] == 0)
				queue[qt++] = v;
	}
	return seen == g->n;
}

static void check_graph(struct fx *f, const struct graph *g)
{
	bool dom[MAXN][MAXN]; /* dom[a][b]: a dominates b */
	for (int a = 0; a < g->n; a++) {
		bool seen[MAXN];
		reach(g, a, seen);
		for (int b = 0; b < g->n; b++)
			dom[a][b] = a == b || !seen[b];
	}
	graph_to_cfg(g, &f->cfg);
	assert_int_equal(cp_loops_find(&f->nest, &f->cfg), 0);
	for (int a = 0; a < g->n; a++)
		for (int b = 0; b < g->n; b++)
			assert_int_equal(cp_loops_dominates(&f->nest, (uint32_t)a, (uint32_t)b),
					 dom[a][b]);
	if (!is_reducible(g, dom)) {
		assert_true(f->nest.nirreducible > 0);
		return;
	}
	assert_int_equal(f->nest.nirreducible, 0);
	int nheaders = 0;
	for (int h = 0; h < g->n; h++) {
		bool has_back = false;
		for (int u = 0; u < g->n; u++)
			has_back |= g->adj[u][h] && dom[h][u];
		if (!has_back)
			continue;
		nheaders++;
		bool body[MAXN];
		natural_body(g, h, dom, body);
		const struct cp_loop *L = NULL;
		for (size_t i = 0; i < f->nest.nloops; i++)
			if (f->nest.loops[i].header_block == (uint32_t)h)
				L = &f->nest.loops[i];
		assert_non_null(L);
		int nbody = 0;
		for (int v = 0; v < g->n; v++)
			nbody += body[v];
		assert_int_equal(L->nblocks, nbody);
		for (uint32_t k = 0; k < L->nblocks; k++)
			assert_true(body[f->nest.blocks[L->first_block + k]]);
		/* the parent is the smallest enclosing loop */
		if (L->parent >= 0) {
			const struct cp_loop *P = &f->nest.loops[L->parent];
			assert_true(P->nblocks > L->nblocks);
			assert_true(body[P->header_block] == false);
			assert_int_equal(L->depth, P->depth + 1);
		}
	}
	assert_int_equal(f->nest.nloops, nheaders);
}

static void test_random_graphs(void **state)
{
	struct fx *f = *state;
	int reducible = 0, total = 0;
	for (unsigned seed = 1; seed <= 4000; seed++) {
		struct graph g;
		memset(&g, 0, sizeof(g));
		srand(seed);
		g.n = 2 + rand() % (MAXN - 1);
		for (int v = 1; v < g.n; v++) /* everything reachable from 0 */
			g.adj[rand() % v][v] = true;
		int extra = rand() % (2 * g.n);
		for (int k = 0; k < extra; k++)
			g.adj[rand() % g.n][rand() % g.n] = true;
		check_graph(f, &g);
		total++;
		reducible += f->nest.nirreducible == 0;
	}
	/* the generator exercises both kinds */
	assert_true(reducible > total / 10 && reducible < total - total / 10);
	f->cfg.nblocks = f->cfg.nedges = 0;
}

/* Code only an unresolved jump reaches still has its loops found, flagged unreachable. */
static void test_unreachable_loop(void **state)
{
	struct fx *f = *state;
	struct graph g;
	memset(&g, 0, sizeof(g));
	g.n = 4; /* 0 (entry, no successors); 1 -> 2 -> 3 -> 2 */
	g.adj[1][2] = g.adj[2][3] = g.adj[3][2] = true;
	graph_to_cfg(&g, &f->cfg);
	assert_int_equal(cp_loops_find(&f->nest, &f->cfg), 0);
	assert_int_equal(f->nest.nloops, 1);
	const struct cp_loop *L = &f->nest.loops[0];
	assert_int_equal(L->header_block, 2);
	assert_int_equal(L->flags, CP_LOOP_UNREACHABLE);
	assert_int_equal(L->nentries, 1);
	assert_int_equal(f->nest.idom[1], CP_CFG_NONE);
	assert_int_equal(f->nest.idom[2], 1);
	assert_false(cp_loops_dominates(&f->nest, 0, 2));
	f->cfg.nblocks = f->cfg.nedges = 0;
}

/* k loops nested k deep (headers 0..k-1, latches k..2k-1, exit 2k): work and memory
 * stay bounded because nesting beyond CP_LOOPS_MAX_DEPTH is not decomposed. */
static void test_deep_nest_truncated(void **state)
{
	struct fx *f = *state;
	const uint32_t k = 3 * CP_LOOPS_MAX_DEPTH, n = 2 * k + 1;
	struct cp_cfg *cfg = &f->cfg;
	cfg->blocks = realloc(cfg->blocks, n * sizeof(*cfg->blocks));
	cfg->edges = realloc(cfg->edges, 2 * n * sizeof(*cfg->edges));
	cfg->nedges = 0;
	for (uint32_t v = 0; v < n; v++) {
		struct cp_cfg_block *b = &cfg->blocks[v];
		memset(b, 0, sizeof(*b));
		b->lo = 0x1000 + 16 * (uint64_t)v, b->hi = b->lo + 16;
		b->first_edge = (uint32_t)cfg->nedges;
		if (v < k) {
			cfg->edges[cfg->nedges++] = (struct cp_cfg_edge){v, v + 1, 0, 0};
		} else if (v < 2 * k) {
			cfg->edges[cfg->nedges++] = (struct cp_cfg_edge){v, 2 * k - 1 - v, 0, 1};
			cfg->edges[cfg->nedges++] = (struct cp_cfg_edge){v, v + 1, 0, 2};
		}
		b->nedges = (uint32_t)(cfg->nedges - b->first_edge);
	}
	cfg->nblocks = n, cfg->entry = 0;
	assert_int_equal(cp_loops_find(&f->nest, cfg), 0);
	assert_int_equal(f->nest.nloops, CP_LOOPS_MAX_DEPTH);
	for (uint32_t i = 0; i < CP_LOOPS_MAX_DEPTH; i++) {
		const struct cp_loop *L = &f->nest.loops[i];
		assert_int_equal(L->depth, i + 1);
		assert_int_equal(L->header_block, i);
		assert_int_equal(L->nblocks, 2 * (k - i));
		assert_int_equal(!!(L->flags & CP_LOOP_TRUNCATED), i + 1 == CP_LOOPS_MAX_DEPTH);
	}
	cfg->nblocks = cfg->nedges = 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_nest3, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_two_back_edges_one_loop, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_irreducible, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_switch_in_loop, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_loop_entered_from_cold_part, fx_setup,
					    fx_teardown),
	    cmocka_unit_test_setup_teardown(test_no_loops, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_random_graphs, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_unreachable_loop, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_deep_nest_truncated, fx_setup, fx_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
