/* The view trees: creation, inclusive sums, names (the bottom-up view is derived in
 * view-callers.c, the flat view in view-flat.c). */
#include "report/view.h"

#include "base/xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *cp_vkind_name(enum cp_vkind k)
{
	static const char *const names[] = {"root",   "procedure", "inlined", "line", "partial",
					    "module", "file",	   "caller",  "loop"};
	return (unsigned)k < sizeof names / sizeof names[0] ? names[k] : "unknown";
}

struct child_key {
	uint32_t parent, kind;
	const char *name, *module, *file;
	int line;
};

/* A statement is identified by its file and line; its name is only their display. */
static uint64_t key_hash(const struct child_key *k)
{
	uint64_t h = cp_hash_mix(k->parent, k->kind);
	h = cp_hash_mix(h, k->kind == CP_VK_LINE ? 0 : (uintptr_t)k->name);
	h = cp_hash_mix(h, (uintptr_t)k->module);
	h = cp_hash_mix(h, (uintptr_t)k->file);
	return cp_hash_mix(h, (uint64_t)k->line);
}

static int key_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct cp_vnode *n = &((const struct cp_view *)ctx)->nodes[idx];
	const struct child_key *k = key;
	return n->parent == k->parent && n->kind == k->kind &&
	       (n->name == k->name || k->kind == CP_VK_LINE) && n->module == k->module &&
	       n->file == k->file && n->line == k->line;
}

static uint32_t node_new(struct cp_view *v, const struct child_key *k)
{
	if (v->n + 1 > v->alloc) {
		XGROW(v->nodes, v->n + 1, v->alloc);
		/* +8: a view of zero metrics still gets distinct, valid pointers */
		v->incl = xrealloc(v->incl, v->alloc * v->nmetrics * sizeof(double) + 8);
		v->excl = xrealloc(v->excl, v->alloc * v->nmetrics * sizeof(double) + 8);
	}
	uint32_t i = (uint32_t)v->n++;
	struct cp_vnode *n = &v->nodes[i];
	memset(n, 0, sizeof *n);
	n->parent = k->parent;
	n->kind = k->kind;
	n->name = k->name;
	n->module = k->module;
	n->file = k->file;
	n->line = k->line;
	n->first_child = n->next_sibling = n->last_child = UINT32_MAX;
	n->stamp = UINT64_MAX;
	for (size_t m = 0; m < v->nmetrics; m++)
		cp_view_incl(v, i)[m] = cp_view_excl(v, i)[m] = 0;
	if (k->parent != UINT32_MAX) {
		struct cp_vnode *p = &v->nodes[k->parent];
		if (p->last_child == UINT32_MAX)
			p->first_child = i;
		else
			v->nodes[p->last_child].next_sibling = i;
		p->last_child = i;
	}
	return i;
}

void cp_view_init(struct cp_view *v, size_t nmetrics, struct cp_intern *pool)
{
	memset(v, 0, sizeof *v);
	v->nmetrics = nmetrics;
	v->pool = pool;
	cp_hashtab_init(&v->children);
	struct child_key root = {UINT32_MAX, CP_VK_ROOT, cp_intern(pool, "<total>"), NULL, NULL, 0};
	node_new(v, &root);
}

void cp_view_release(struct cp_view *v)
{
	free(v->nodes);
	free(v->incl);
	free(v->excl);
	cp_hashtab_release(&v->children);
	memset(v, 0, sizeof *v);
}

uint32_t cp_view_child(struct cp_view *v, uint32_t parent, enum cp_vkind kind, const char *name,
		       const char *module, const char *file, int line)
{
	struct child_key k = {parent, kind, name, module, file, line};
	uint64_t h = key_hash(&k);
	uint32_t i = cp_hashtab_find(&v->children, h, key_eq, v, &k);
	if (i != UINT32_MAX)
		return i;
	i = node_new(v, &k);
	cp_hashtab_insert(&v->children, h, i);
	return i;
}

uint32_t cp_view_find_like(const struct cp_view *v, uint32_t parent, const struct cp_view *other,
			   uint32_t like)
{
	const struct cp_vnode *o = &other->nodes[like];
	struct child_key k = {parent, o->kind, o->name, o->module, o->file, o->line};
	return cp_hashtab_find(&v->children, key_hash(&k), key_eq, v, &k);
}

uint32_t cp_view_append(struct cp_view *v, uint32_t parent, enum cp_vkind kind, const char *name,
			const char *module, const char *file, int line)
{
	struct child_key k = {parent, kind, name, module, file, line};
	return node_new(v, &k);
}

void cp_view_sum_inclusive(struct cp_view *v)
{
	size_t nm = v->nmetrics;
	memcpy(v->incl, v->excl, v->n * nm * sizeof(double));
	/* Children always have larger indices than their parents. */
	for (size_t i = v->n; i-- > 1;) {
		double *pi = cp_view_incl(v, v->nodes[i].parent),
		       *ci = cp_view_incl(v, (uint32_t)i);
		for (size_t m = 0; m < nm; m++)
			pi[m] += ci[m];
	}
	/* A frame's or loop's exclusive value is the cost of its body (inlined code and nested
	 * loops included, calls excluded): add each node's own cost to its enclosing loops and
	 * inlined frames up to its procedure frame (or <partial call paths>, the frame of the
	 * costs outside any procedure, as in the database). Own costs are the values before
	 * this pass, which in the incl array are gone, so walk from the deepest nodes up: a
	 * node's own cost is still intact in excl when its descendants have not been added to
	 * it yet. */
	double *own = xmalloc(v->n * nm * sizeof(double) + 8);
	memcpy(own, v->excl, v->n * nm * sizeof(double));
	for (size_t i = 1; i < v->n; i++) {
		uint32_t k = v->nodes[i].kind;
		if (k == CP_VK_PROCEDURE || k == CP_VK_PARTIAL)
			continue;
		const double *e = own + i * nm;
		int any = 0;
		for (size_t m = 0; m < nm; m++)
			any |= e[m] != 0;
		if (!any)
			continue;
		/* Loop-own metrics past their loop stop. */
		uint64_t stopped = k == CP_VK_LOOP ? v->loop_own : 0;
		for (uint32_t a = v->nodes[i].parent; a != UINT32_MAX; a = v->nodes[a].parent) {
			uint32_t ak = v->nodes[a].kind;
			if (ak != CP_VK_INLINED && ak != CP_VK_PROCEDURE && ak != CP_VK_LOOP &&
			    ak != CP_VK_PARTIAL)
				break;
			double *ae = cp_view_excl(v, a);
			for (size_t m = 0; m < nm; m++)
				if (m >= 64 || !(stopped >> m & 1))
					ae[m] += e[m];
			if (ak == CP_VK_PROCEDURE || ak == CP_VK_PARTIAL)
				break;
			if (ak == CP_VK_LOOP)
				stopped = v->loop_own;
		}
	}
	free(own);
}

const char *cp_view_line_name(struct cp_intern *pool, const char *file, int line)
{
	char buf[512];
	const char *base = file ? strrchr(file, '/') : NULL;
	base = base ? base + 1 : file ? file : "<unknown file>";
	if (line > 0)
		snprintf(buf, sizeof buf, "%s:%d", base, line);
	else
		snprintf(buf, sizeof buf, "%s", base);
	return cp_intern(pool, buf);
}

const char *cp_view_loop_name(struct cp_intern *pool, const char *file, int lo, int hi)
{
	char buf[600];
	const char *base = file ? strrchr(file, '/') : NULL;
	base = base ? base + 1 : file ? file : "<unknown file>";
	if (lo > 0 && hi > lo)
		snprintf(buf, sizeof buf, "loop at %s:%d-%d", base, lo, hi);
	else if (lo > 0)
		snprintf(buf, sizeof buf, "loop at %s:%d", base, lo);
	else
		snprintf(buf, sizeof buf, "loop at %s", base);
	return cp_intern(pool, buf);
}
