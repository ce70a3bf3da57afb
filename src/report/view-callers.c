/* The bottom-up (callers) view, derived from a top-down tree.
 *
 * A procedure's cost is that of its outermost occurrences on each path (an occurrence with
 * no ancestor frame of the same procedure): their inclusive values never overlap, so
 * recursion is not counted twice, and the exclusive cost of every nested occurrence is
 * credited to the outermost one. Each outermost occurrence then adds its values along the
 * chain of its callers, once per top-down node rather than once per sample.
 *
 * <partial call paths> is a procedure here: its exclusive value is the cost outside any
 * procedure frame, so that the procedures' exclusive values add up to the total; and a
 * chain of callers that reaches it ends with a <partial call paths> row (the callers
 * above are unknown), so that a procedure's callers hold all of its cost. */
#include "report/view.h"

#include "base/xalloc.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

struct proc_slot {
	const char *name, *module;
	uint32_t outer; /* outermost occurrence on the current DFS path */
	uint32_t count; /* occurrences on the current DFS path */
};

struct callers {
	const struct cp_view *td;
	struct proc_slot *slots;
	size_t nslots, alloc;
	struct cp_hashtab tab;
	uint32_t *slot_of;  /* per td node: its procedure slot, or UINT32_MAX */
	uint32_t *outer_of; /* per td node: the outermost occurrence of its procedure */
};

static int slot_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct proc_slot *s = &((const struct callers *)ctx)->slots[idx];
	const struct cp_vnode *n = key;
	return s->name == n->name && s->module == n->module;
}

static uint32_t slot_get(struct callers *c, const struct cp_vnode *n)
{
	uint64_t h = cp_hash_mix((uintptr_t)n->name, (uintptr_t)n->module);
	uint32_t i = cp_hashtab_find(&c->tab, h, slot_eq, c, n);
	if (i != UINT32_MAX)
		return i;
	XGROW(c->slots, c->nslots + 1, c->alloc);
	i = (uint32_t)c->nslots++;
	c->slots[i] = (struct proc_slot){n->name, n->module, 0, 0};
	cp_hashtab_insert(&c->tab, h, i);
	return i;
}

static void enter(struct callers *c, uint32_t i)
{
	const struct cp_vnode *n = &c->td->nodes[i];
	if (n->kind != CP_VK_PROCEDURE && n->kind != CP_VK_PARTIAL)
		return;
	uint32_t s = slot_get(c, n);
	c->slot_of[i] = s;
	if (c->slots[s].count++ == 0)
		c->slots[s].outer = i;
	c->outer_of[i] = c->slots[s].outer;
}

static void leave(struct callers *c, uint32_t i)
{
	if (c->slot_of[i] != UINT32_MAX)
		c->slots[c->slot_of[i]].count--;
}

/* Depth-first over the tree without recursion (its depth is the stack depth). */
static void find_outermost(struct callers *c)
{
	const struct cp_vnode *nodes = c->td->nodes;
	uint32_t i = nodes[0].first_child;
	while (i != UINT32_MAX) {
		enter(c, i);
		if (nodes[i].first_child != UINT32_MAX) {
			i = nodes[i].first_child;
			continue;
		}
		while (i != UINT32_MAX) {
			leave(c, i);
			if (nodes[i].next_sibling != UINT32_MAX) {
				i = nodes[i].next_sibling;
				break;
			}
			i = nodes[i].parent;
			if (i == 0)
				i = UINT32_MAX;
		}
	}
}

static void contrib_add(struct cp_view_contribs *rec, uint32_t node, uint32_t src, uint32_t excl)
{
	if (!rec)
		return;
	XGROW(rec->v, rec->n + 1, rec->alloc);
	rec->v[rec->n++] = (struct cp_view_contrib){node, src, excl};
}

static void add_values(struct cp_view *v, uint32_t node, const double *incl, const double *excl)
{
	double *in = cp_view_incl(v, node), *ex = cp_view_excl(v, node);
	for (size_t m = 0; m < v->nmetrics; m++) {
		in[m] += incl[m];
		ex[m] += excl[m];
	}
}

/* Adds occurrence x (values incl/excl) along the chain of its callers below top, at most
 * levels deep. */
static void add_chain(const struct cp_view *td, struct cp_view *out, uint32_t top, uint32_t x,
		      const double *excl, int levels, struct cp_view_contribs *rec)
{
	const struct cp_vnode *n = &td->nodes[x];
	const double *incl = cp_view_incl(td, x);
	uint32_t at = top;
	uint32_t callee = x;
	for (uint32_t a = n->parent; a != UINT32_MAX && a != 0 && levels > 0;
	     a = td->nodes[a].parent) {
		const struct cp_vnode *an = &td->nodes[a];
		if (an->kind == CP_VK_PARTIAL) /* the callers above are unknown */
			at = cp_view_child(out, at, CP_VK_PARTIAL, an->name, NULL, NULL, 0);
		else if (an->kind == CP_VK_PROCEDURE)
			at = cp_view_child(out, at, CP_VK_CALLER, an->name, an->module,
					   td->nodes[callee].file, td->nodes[callee].line);
		else
			continue;
		add_values(out, at, incl, excl);
		contrib_add(rec, at, x, 1);
		callee = a;
		levels--;
	}
}

static void callers_release(struct callers *c)
{
	free(c->slot_of);
	free(c->outer_of);
	free(c->slots);
	cp_hashtab_release(&c->tab);
}

void cp_view_contribs_release(struct cp_view_contribs *c)
{
	free(c->v);
	free(c->outer_of);
	memset(c, 0, sizeof *c);
}

void cp_view_bottom_up(const struct cp_view *td, struct cp_view *out,
		       const struct cp_view_limits *lim)
{
	cp_view_bottom_up_rec(td, out, lim, NULL);
}

void cp_view_bottom_up_rec(const struct cp_view *td, struct cp_view *out,
			   const struct cp_view_limits *lim, struct cp_view_contribs *rec)
{
	struct callers c;
	size_t nm = td->nmetrics;
	memset(&c, 0, sizeof c);
	c.td = td;
	cp_hashtab_init(&c.tab);
	c.slot_of = xmalloc(td->n * sizeof(*c.slot_of));
	c.outer_of = xmalloc(td->n * sizeof(*c.outer_of));
	memset(c.slot_of, 0xff, td->n * sizeof(*c.slot_of));
	memset(c.outer_of, 0xff, td->n * sizeof(*c.outer_of));
	find_outermost(&c);
	/* Exclusive cost of every occurrence, credited to its outermost occurrence. */
	double *acc = xcalloc(td->n * nm + 1, sizeof(*acc));
	for (uint32_t i = 1; i < td->n; i++)
		if (c.outer_of[i] != UINT32_MAX)
			for (size_t m = 0; m < nm; m++)
				acc[(size_t)c.outer_of[i] * nm + m] += cp_view_excl(td, i)[m];
	cp_view_init(out, nm, td->pool);
	/* Procedures first: a procedure below the limit hides all its caller chains. */
	for (uint32_t i = 1; i < td->n; i++)
		if (c.outer_of[i] == i) {
			const struct cp_vnode *n = &td->nodes[i];
			uint32_t top = cp_view_child(out, 0, (enum cp_vkind)n->kind, n->name,
						     n->module, NULL, 0);
			add_values(out, top, cp_view_incl(td, i), acc + (size_t)i * nm);
			contrib_add(rec, top, i, 1);
		}
	int levels = lim && lim->max_depth > 0 ? lim->max_depth - 1 : INT_MAX;
	for (uint32_t i = 1; i < td->n && levels > 0; i++) {
		if (c.outer_of[i] != i)
			continue;
		const struct cp_vnode *n = &td->nodes[i];
		uint32_t top =
		    cp_view_child(out, 0, (enum cp_vkind)n->kind, n->name, n->module, NULL, 0);
		if (lim && cp_view_incl(out, top)[lim->metric] < lim->min_incl)
			continue;
		add_chain(td, out, top, i, acc + (size_t)i * nm, levels, rec);
	}
	memcpy(cp_view_incl(out, 0), cp_view_incl(td, 0), nm * sizeof(double));
	free(acc);
	if (rec) {
		rec->outer_of = c.outer_of;
		c.outer_of = NULL;
	}
	callers_release(&c);
}
