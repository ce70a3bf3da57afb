/* The search history graph and the loop-aware refinement rule (graph.h). */
#include "search/graph.h"

#include "base/xalloc.h"

#include <stdlib.h>
#include <string.h>

void cp_code_model_init(struct cp_code_model *m)
{
	memset(m, 0, sizeof *m);
}

void cp_code_model_release(struct cp_code_model *m)
{
	for (size_t i = 0; i < m->nmodules; i++)
		free(m->modules[i].path);
	free(m->modules);
	free(m->seen);
	for (size_t i = 0; i < m->nfuncs; i++)
		free(m->funcs[i].name);
	free(m->funcs);
	free(m->calls);
	free(m->loops);
	free(m->ranges);
	free(m->parts);
	cp_code_model_init(m);
}

uint32_t cp_code_model_module(struct cp_code_model *m, const char *path)
{
	XGROW(m->modules, m->nmodules + 1, m->modules_alloc);
	struct cp_code_module *mod = &m->modules[m->nmodules];
	mod->path = xstrdup(path);
	mod->first_func = (uint32_t)m->nfuncs;
	mod->nfuncs = 0;
	return (uint32_t)m->nmodules++;
}

long cp_code_model_module_find(const struct cp_code_model *m, const char *path)
{
	for (size_t i = 0; i < m->nmodules; i++)
		if (!strcmp(m->modules[i].path, path))
			return (long)i;
	return -1;
}

uint32_t cp_code_model_func(struct cp_code_model *m, const char *name)
{
	if (!m->nmodules)
		cp_code_model_module(m, "");
	XGROW(m->funcs, m->nfuncs + 1, m->funcs_alloc);
	struct cp_code_func *f = &m->funcs[m->nfuncs];
	f->name = xstrdup(name);
	f->module = (uint32_t)m->nmodules - 1;
	m->modules[f->module].nfuncs++;
	f->first_call = (uint32_t)m->ncalls;
	f->ncalls = 0;
	f->lo = f->hi = 0;
	f->plt = 0;
	return (uint32_t)m->nfuncs++;
}

void cp_code_model_part(struct cp_code_model *m, uint32_t f, uint64_t lo, uint64_t hi)
{
	XGROW(m->parts, m->nparts + 1, m->parts_alloc);
	m->parts[m->nparts++] = (struct cp_code_part){f, lo, hi};
}

void cp_code_model_call(struct cp_code_model *m, uint32_t caller, uint32_t callee, int32_t loop)
{
	XGROW(m->calls, m->ncalls + 1, m->calls_alloc);
	m->calls[m->ncalls++] = (struct cp_code_call){callee, loop};
	m->funcs[caller].ncalls++;
}

uint32_t cp_code_model_loop(struct cp_code_model *m, uint32_t func, int32_t parent, uint64_t header)
{
	XGROW(m->loops, m->nloops + 1, m->loops_alloc);
	m->loops[m->nloops] =
	    (struct cp_code_loop){func, parent, header, 0, 0, (uint32_t)m->nranges, 0};
	return (uint32_t)m->nloops++;
}

void cp_code_model_loop_range(struct cp_code_model *m, uint32_t l, uint64_t lo, uint64_t hi)
{
	struct cp_code_loop *L = &m->loops[l];
	XGROW(m->ranges, m->nranges + 1, m->ranges_alloc);
	m->ranges[m->nranges++] = (struct cp_code_range){lo, hi};
	L->nranges++;
	if (L->nranges == 1 || lo < L->lo)
		L->lo = lo;
	if (L->nranges == 1 || hi > L->hi)
		L->hi = hi;
}

int cp_code_model_loop_has(const struct cp_code_model *m, uint32_t l, uint64_t a)
{
	const struct cp_code_loop *L = &m->loops[l];
	if (a < L->lo || a >= L->hi)
		return 0;
	for (uint32_t r = 0; r < L->nranges; r++)
		if (a >= m->ranges[L->first_range + r].lo && a < m->ranges[L->first_range + r].hi)
			return 1;
	return !L->nranges;
}

int cp_code_model_seen(struct cp_code_model *m, uint32_t caller, uint32_t callee, int32_t loop)
{
	if (m->funcs[callee].plt) /* a sample in a PLT stub: the stub is no focus */
		return 0;
	for (size_t i = 0; i < m->nseen; i++)
		if (m->seen[i].caller == caller && m->seen[i].callee == callee &&
		    m->seen[i].loop == loop)
			return 0;
	XGROW(m->seen, m->nseen + 1, m->seen_alloc);
	m->seen[m->nseen++] = (struct cp_code_seen_call){caller, callee, loop};
	return 1;
}

int cp_code_model_calls_at(const struct cp_code_model *m, uint32_t func, int32_t level,
			   uint32_t callee)
{
	const struct cp_code_func *f = &m->funcs[func];
	for (uint32_t c = 0; c < f->ncalls; c++)
		if (m->calls[f->first_call + c].callee == callee &&
		    m->calls[f->first_call + c].loop == level)
			return 1;
	for (size_t i = 0; i < m->nseen; i++)
		if (m->seen[i].caller == func && m->seen[i].callee == callee &&
		    m->seen[i].loop == level)
			return 1;
	return 0;
}

void cp_search_graph_init(struct cp_search_graph *g)
{
	memset(g, 0, sizeof *g);
}

void cp_search_graph_release(struct cp_search_graph *g)
{
	free(g->nodes);
	cp_search_graph_init(g);
}

/* A new queued node with key's hypothesis and foci, under key's parent. */
static uint32_t node_new(struct cp_search_graph *g, const struct cp_search_node *key)
{
	XGROW(g->nodes, g->n + 1, g->alloc);
	struct cp_search_node *n = &g->nodes[g->n];
	*n = *key;
	n->state = CP_NODE_QUEUED;
	n->deep = 0;
	n->value = n->decided = n->cost = 0;
	return (uint32_t)g->n++;
}

uint32_t cp_search_node_get(struct cp_search_graph *g, uint32_t hyp, int kind, uint32_t target,
			    int32_t parent)
{
	for (size_t i = 0; i < g->n; i++)
		if (g->nodes[i].hyp == hyp && g->nodes[i].kind == kind &&
		    g->nodes[i].target == target && g->nodes[i].thread < 0 && g->nodes[i].sync < 0)
			return (uint32_t)i;
	struct cp_search_node key = {.hyp = hyp,
				     .kind = (uint8_t)kind,
				     .target = target,
				     .parent = parent,
				     .thread = -1,
				     .sync = -1};
	return node_new(g, &key);
}

uint32_t cp_search_node_sync(struct cp_search_graph *g, uint32_t hyp, uint32_t target, int32_t sync,
			     int32_t parent)
{
	for (size_t i = 0; i < g->n; i++)
		if (g->nodes[i].hyp == hyp && g->nodes[i].sync == sync)
			return (uint32_t)i;
	struct cp_search_node key = {.hyp = hyp,
				     .kind = CP_FOCUS_FUNC,
				     .target = target,
				     .parent = parent,
				     .thread = -1,
				     .sync = sync};
	return node_new(g, &key);
}

uint32_t cp_search_node_thread(struct cp_search_graph *g, uint32_t i, int32_t t)
{
	struct cp_search_node a = g->nodes[i];
	for (size_t j = 0; j < g->n; j++)
		if (g->nodes[j].hyp == a.hyp && g->nodes[j].kind == a.kind &&
		    g->nodes[j].target == a.target && g->nodes[j].thread == t &&
		    g->nodes[j].sync == a.sync)
			return (uint32_t)j;
	a.parent = (int32_t)i;
	a.thread = t;
	return node_new(g, &a);
}

/* Children of a true focus (paper §5): calls made at `level` (-1: outside every loop of
 * func; else directly in that loop; static calls and calls seen on sampled paths), and
 * the loops whose parent is `level`. */
static size_t refine(struct cp_search_graph *g, const struct cp_code_model *m, uint32_t i,
		     uint32_t func, int32_t level)
{
	size_t before = g->n;
	uint32_t hyp = g->nodes[i].hyp;
	const struct cp_code_func *f = &m->funcs[func];
	for (uint32_t c = 0; c < f->ncalls; c++) {
		const struct cp_code_call *call = &m->calls[f->first_call + c];
		if (call->loop == level && !m->funcs[call->callee].plt)
			cp_search_node_get(g, hyp, CP_FOCUS_FUNC, call->callee, (int32_t)i);
	}
	for (size_t c = 0; c < m->nseen; c++)
		if (m->seen[c].caller == func && m->seen[c].loop == level)
			cp_search_node_get(g, hyp, CP_FOCUS_FUNC, m->seen[c].callee, (int32_t)i);
	for (size_t l = 0; l < m->nloops; l++)
		if (m->loops[l].func == func && m->loops[l].parent == level)
			cp_search_node_get(g, hyp, CP_FOCUS_LOOP, (uint32_t)l, (int32_t)i);
	return g->n - before;
}

size_t cp_search_decide(struct cp_search_graph *g, const struct cp_code_model *m, uint32_t i,
			int is_true, double value, double t)
{
	struct cp_search_node *n = &g->nodes[i];
	n->state = is_true ? CP_NODE_TRUE : CP_NODE_FALSE;
	n->value = value;
	n->decided = t;
	n->cost = 0;
	if (!is_true || n->thread >= 0 || n->sync >= 0)
		return 0;
	if (n->kind == CP_FOCUS_FUNC)
		return refine(g, m, i, n->target, -1);
	return refine(g, m, i, m->loops[n->target].func, (int32_t)n->target);
}

static double pending_cost(const struct cp_search_graph *g)
{
	double c = 0;
	for (size_t i = 0; i < g->n; i++)
		if (g->nodes[i].state == CP_NODE_PENDING)
			c += g->nodes[i].cost;
	return c;
}

size_t cp_search_next(struct cp_search_graph *g, double limit, uint32_t *out, size_t max)
{
	size_t k = 0;
	if (pending_cost(g) >= limit)
		return 0;
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < g->n && k < max; i++) {
			struct cp_search_node *n = &g->nodes[i];
			if (n->state != CP_NODE_QUEUED || n->deep != !pass)
				continue;
			n->state = CP_NODE_PENDING;
			out[k++] = (uint32_t)i;
		}
	return k;
}

void cp_search_graph_dot(const struct cp_search_graph *g, const struct cp_code_model *m,
			 const char *const *hyps, FILE *out)
{
	static const char *const state[] = {"queued", "pending", "true", "false"};
	fprintf(out, "digraph search {\n");
	for (size_t i = 0; i < g->n; i++) {
		const struct cp_search_node *n = &g->nodes[i];
		const struct cp_code_loop *l =
		    n->kind == CP_FOCUS_LOOP ? &m->loops[n->target] : NULL;
		const char *fn = m->funcs[l ? l->func : n->target].name;
		fprintf(out, "  n%zu [label=\"%s\\n%s%s", i, hyps[n->hyp], l ? "loop in " : "", fn);
		if (l)
			fprintf(out, " at 0x%llx", (unsigned long long)l->header);
		fprintf(out, "\\n%s %.1f%%\"%s];\n", state[n->state], 100 * n->value,
			n->state == CP_NODE_TRUE ? " style=bold" : "");
		if (n->parent >= 0)
			fprintf(out, "  n%d -> n%zu;\n", n->parent, i);
	}
	fprintf(out, "}\n");
}
