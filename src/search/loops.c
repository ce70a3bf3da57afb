/* Loop probe planning (loops.h). */
#include "search/loops.h"

#include "analyze/cfg/cfg-module.h"
#include "analyze/loops/loops.h"
#include "analyze/module.h"
#include "base/error.h"
#include "base/xalloc.h"
#include "search/graph.h"

#include <stdlib.h>
#include <string.h>

struct event {
	uint64_t src;
	char edge; /* 't' taken (or the jmp/ret itself), 'f' fall-through */
	char kind; /* 'x', 'e', 'b' */
	int order; /* exits innermost first, then entries outermost first, then backs */
	int loop;  /* index in the request */
};

struct plan_ctx {
	const struct cp_cfg *cfg;
	struct cp_loop_plan *p;
	struct event *ev;
	size_t nev, alloc;
};

void cp_loop_plan_init(struct cp_loop_plan *p)
{
	memset(p, 0, sizeof *p);
	strbuf_init(&p->request);
	strbuf_init(&p->notes);
}

void cp_loop_plan_release(struct cp_loop_plan *p)
{
	strbuf_release(&p->request);
	strbuf_release(&p->notes);
}

/* Which instrumentable edge a CFG edge is: 't'/'f', or 0 (with a note) when none. */
static char edge_side(struct plan_ctx *c, const struct cp_cfg_edge *e)
{
	const struct cp_cfg_block *b = &c->cfg->blocks[e->src];
	switch (e->kind) {
	case CP_CFG_COND_TAKEN:
	case CP_CFG_JUMP:
	case CP_CFG_RETURN:
		return 't';
	case CP_CFG_COND_NOT_TAKEN:
	case CP_CFG_FALLTHROUGH:
	case CP_CFG_CALL_FALLTHROUGH:
		return 'f';
	case CP_CFG_TAILCALL:
	case CP_CFG_OUTSIDE:
		return e->target == b->hi ? 'f' : 't';
	case CP_CFG_NORETURN:
		return 0; /* the function does not go on: nothing to end */
	default:
		strbuf_addf(&c->p->notes, "edge at 0x%llx: an indirect jump, not instrumented\n",
			    (unsigned long long)b->last);
		return 0;
	}
}

static void add_events(struct plan_ctx *c, const struct cp_loop_nest *n, uint32_t first,
		       uint32_t count, char kind, int loop, int depth)
{
	for (uint32_t i = 0; i < count; i++) {
		const struct cp_cfg_edge *e = &c->cfg->edges[n->edges[first + i]];
		char side = edge_side(c, e);
		if (!side)
			continue;
		XGROW(c->ev, c->nev + 1, c->alloc);
		int order = kind == 'x' ? 1000 - depth : kind == 'e' ? 1000 + depth : 2000 + depth;
		c->ev[c->nev++] =
		    (struct event){c->cfg->blocks[e->src].last, side, kind, order, loop};
	}
}

static int event_cmp(const void *a, const void *b)
{
	const struct event *x = a, *y = b;
	if (x->src != y->src)
		return x->src < y->src ? -1 : 1;
	if (x->edge != y->edge)
		return x->edge - y->edge;
	return x->order - y->order;
}

/* h=... and the edges, each with its events in order. */
static void write_request(struct plan_ctx *c)
{
	struct strbuf *r = &c->p->request;
	qsort(c->ev, c->nev, sizeof *c->ev, event_cmp);
	for (size_t i = 0; i < c->nev; i++) {
		const struct event *e = &c->ev[i];
		int same = i && e->src == e[-1].src && e->edge == e[-1].edge;
		if (same)
			strbuf_addf(r, ".%c%d", e->kind, e->loop);
		else {
			strbuf_addf(r, " %llx:%c:%c%d", (unsigned long long)e->src, e->edge,
				    e->kind, e->loop);
			c->p->nedges++;
		}
	}
}

static int loop_inside(const struct cp_loop_nest *n, const struct cp_loop *L, uint64_t lo,
		       uint64_t hi)
{
	for (uint32_t r = 0; r < L->nranges; r++)
		if (n->ranges[L->first_range + r].lo < lo || n->ranges[L->first_range + r].hi > hi)
			return 0;
	return 1;
}

static void plan_loops(struct plan_ctx *c, const struct cp_loop_nest *n)
{
	struct cp_loop_plan *p = c->p;
	int *index = xcalloc(n->nloops + 1, sizeof *index);
	strbuf_addstr(&p->request, " h=");
	for (size_t i = 0; i < n->nloops; i++) {
		const struct cp_loop *L = &n->loops[i];
		index[i] = -1;
		if (!loop_inside(n, L, p->func_lo, p->func_hi) ||
		    (L->parent >= 0 && index[L->parent] < 0)) {
			strbuf_addf(&p->notes,
				    "loop at 0x%llx: outside the function's main part "
				    "(a .cold part), not instrumented\n",
				    (unsigned long long)L->header);
			continue;
		}
		if (L->entered_at_start)
			strbuf_addf(&p->notes,
				    "loop at 0x%llx: entered at the function's entry; that "
				    "entry is not counted\n",
				    (unsigned long long)L->header);
		index[i] = (int)p->nloops++;
		strbuf_addf(&p->request, "%s%llx", index[i] ? "," : "",
			    (unsigned long long)L->header);
		int d = (int)L->depth;
		add_events(c, n, L->first_exit, L->nexits, 'x', index[i], d);
		add_events(c, n, L->first_entry, L->nentries, 'e', index[i], d);
		add_events(c, n, L->first_back, L->nbacks, 'b', index[i], d);
	}
	free(index);
	write_request(c);
}

static long find_proc(const struct cp_proc_table *t, const char *name)
{
	for (size_t i = 0; i < t->nprocs; i++) {
		const struct cp_proc *pr = &t->procs[i];
		if (pr->flags & CP_PROC_PLT)
			continue;
		if (!strcmp(pr->name, name) || (pr->linkage && !strcmp(pr->linkage, name)))
			return (long)i;
		for (size_t a = 0; a < pr->naliases; a++)
			if (!strcmp(pr->aliases[a], name))
				return (long)i;
	}
	return -1;
}

static int plan_proc(struct cp_loop_plan *p, struct cp_module *m, size_t proc, const char *func)
{
	struct cp_cfg_module cm;
	struct cp_cfg cfg;
	struct cp_loop_nest n;
	struct plan_ctx c = {&cfg, p, NULL, 0, 0};
	cp_cfg_module_init(&cm, m);
	struct cp_cfg_oracle oracle = cp_cfg_module_oracle(&cm);
	cp_cfg_init(&cfg);
	cp_loop_nest_init(&n);
	int rc = cp_cfg_module_build(&cm, &cfg, proc, &oracle);
	if (!rc)
		cp_loops_find(&n, &cfg);
	if (!rc && !n.nloops)
		rc = cp_error(CP_ENOENT, "function %s has no loops", func);
	if (!rc)
		plan_loops(&c, &n);
	if (!rc && !p->nloops)
		rc = cp_error(CP_ENOENT, "function %s has no loop that can be instrumented", func);
	free(c.ev);
	cp_loop_nest_release(&n);
	cp_cfg_release(&cfg);
	cp_cfg_module_release(&cm);
	return rc;
}

int cp_loop_plan_make(struct cp_loop_plan *p, const char *path, const char *func)
{
	struct cp_module m;
	int rc = cp_module_open(&m, path, 0);
	if (rc)
		return rc;
	long proc = find_proc(&m.procs, func);
	if (proc < 0) {
		rc = cp_error(CP_ENOENT, "no function %s in %s", func, path);
		goto out;
	}
	const struct cp_proc *pr = &m.procs.procs[proc];
	p->func_lo = pr->lo;
	p->func_hi = pr->hi;
	strbuf_addf(&p->request, "%s %llx %llu", path, (unsigned long long)pr->lo,
		    (unsigned long long)(pr->hi - pr->lo));
	rc = plan_proc(p, &m, (size_t)proc, func);
out:
	cp_module_release(&m);
	return rc;
}

/* One procedure's loops and calls into the model (function fid already added). */
static void model_proc(struct cp_code_model *model, const struct cp_proc_table *procs, uint32_t fid,
		       const struct cp_cfg *cfg, const struct cp_loop_nest *n)
{
	uint32_t fbase = model->modules[model->funcs[fid].module].first_func;
	uint32_t base = (uint32_t)model->nloops;
	for (size_t l = 0; l < n->nloops; l++) {
		const struct cp_loop *lp = &n->loops[l];
		uint32_t id = cp_code_model_loop(
		    model, fid, lp->parent < 0 ? -1 : (int32_t)base + lp->parent, lp->header);
		for (uint32_t r = 0; r < lp->nranges; r++) /* in any order: a rotated loop's body
							    * often lies before its header */
			cp_code_model_loop_range(model, id, n->ranges[lp->first_range + r].lo,
						 n->ranges[lp->first_range + r].hi);
	}
	for (size_t e = 0; e < cfg->nedges; e++) {
		const struct cp_cfg_edge *ed = &cfg->edges[e];
		if ((ed->kind != CP_CFG_CALL_FALLTHROUGH && ed->kind != CP_CFG_NORETURN) ||
		    !ed->target)
			continue;
		const struct cp_proc_range *r = cp_proc_table_find(procs, ed->target);
		if (!r || r->is_part)
			continue;
		int32_t loop = n->block_loop[ed->src];
		cp_code_model_call(model, fid, fbase + (uint32_t)r->proc,
				   loop < 0 ? -1 : (int32_t)base + loop);
	}
}

int cp_code_model_from_module(struct cp_code_model *model, const char *path)
{
	struct cp_module m;
	struct cp_cfg_module cm;
	struct cp_cfg cfg;
	struct cp_loop_nest n;
	int rc = cp_module_open(&m, path, 0);
	if (rc)
		return rc;
	cp_cfg_module_init(&cm, &m);
	struct cp_cfg_oracle oracle = cp_cfg_module_oracle(&cm);
	cp_cfg_init(&cfg);
	cp_loop_nest_init(&n);
	cp_code_model_module(model, path);
	for (size_t i = 0; i < m.procs.nprocs; i++) {
		uint32_t fid = cp_code_model_func(model, m.procs.procs[i].name);
		model->funcs[fid].lo = m.procs.procs[i].lo;
		model->funcs[fid].hi = m.procs.procs[i].hi;
		model->funcs[fid].plt = (m.procs.procs[i].flags & CP_PROC_PLT) != 0;
		for (size_t k = 0; k < m.procs.procs[i].nparts; k++)
			cp_code_model_part(model, fid, m.procs.procs[i].parts[k].lo,
					   m.procs.procs[i].parts[k].hi);
		if (m.procs.procs[i].flags & CP_PROC_PLT ||
		    cp_cfg_module_build(&cm, &cfg, i, &oracle))
			continue;
		cp_loops_find(&n, &cfg);
		model_proc(model, &m.procs, fid, &cfg, &n);
	}
	cp_loop_nest_release(&n);
	cp_cfg_release(&cfg);
	cp_cfg_module_release(&cm);
	cp_module_release(&m);
	return 0;
}
