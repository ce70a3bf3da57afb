/* Which rows of a view are shown, in which order. */
#include "report/render.h"

#include "base/error.h"
#include "base/xalloc.h"

#include <stdlib.h>
#include <string.h>

struct select_ctx {
	struct cp_render *r;
	uint64_t min_incl;
	uint32_t *buf; /* scratch for sorting children */
};

static const struct select_ctx *sort_ctx;

static int child_cmp(const void *a, const void *b)
{
	const struct cp_render *r = sort_ctx->r;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	const struct cp_vnode *nx = &r->view->nodes[x], *ny = &r->view->nodes[y];
	if (r->opt->sort != CP_SORT_NAME) {
		int incl = r->opt->sort == CP_SORT_INCLUSIVE;
		uint64_t vx = (incl ? cp_view_incl(r->view, x) : cp_view_excl(r->view, x))[r->metric];
		uint64_t vy = (incl ? cp_view_incl(r->view, y) : cp_view_excl(r->view, y))[r->metric];
		if (vx != vy)
			return vx > vy ? -1 : 1;
	}
	int c = strcmp(nx->name, ny->name);
	if (c)
		return c;
	if (nx->line != ny->line)
		return nx->line < ny->line ? -1 : 1;
	return x < y ? -1 : x > y;
}

static void row_add(struct cp_render *r, uint32_t node, uint32_t parent, int depth)
{
	XGROW(r->rows.rows, r->rows.n + 1, r->rows.alloc);
	struct cp_row *row = &r->rows.rows[r->rows.n++];
	row->node = node;
	row->parent = parent;
	row->depth = depth;
	row->last = 0;
}

static int visible(const struct select_ctx *c, uint32_t node, int depth)
{
	const struct cp_render *r = c->r;
	if (r->opt->depth > 0 && depth > r->opt->depth)
		return 0;
	return cp_view_incl(r->view, node)[r->metric] >= c->min_incl;
}

static void select_list(struct select_ctx *c, const uint32_t *kids, size_t n, uint32_t parent,
			int depth);

static void select_children(struct select_ctx *c, uint32_t node, int depth)
{
	const struct cp_view *v = c->r->view;
	size_t n = 0;
	for (uint32_t k = v->nodes[node].first_child; k != UINT32_MAX; k = v->nodes[k].next_sibling)
		if (visible(c, k, depth))
			n++;
	if (!n)
		return;
	uint32_t *kids = xmalloc(n * sizeof(*kids));
	n = 0;
	for (uint32_t k = v->nodes[node].first_child; k != UINT32_MAX; k = v->nodes[k].next_sibling)
		if (visible(c, k, depth))
			kids[n++] = k;
	select_list(c, kids, n, node, depth);
	free(kids);
}

static void select_list(struct select_ctx *c, const uint32_t *kids, size_t n, uint32_t parent,
			int depth)
{
	uint32_t *sorted = xmalloc((n ? n : 1) * sizeof(*sorted));
	memcpy(sorted, kids, n * sizeof(*sorted));
	sort_ctx = c;
	qsort(sorted, n, sizeof(*sorted), child_cmp);
	for (size_t i = 0; i < n; i++) {
		row_add(c->r, sorted[i], parent, depth);
		c->r->rows.rows[c->r->rows.n - 1].last = i + 1 == n;
		select_children(c, sorted[i], depth + 1);
	}
	free(sorted);
}

static int focus_match(const char *name, const char *focus)
{
	size_t n = strlen(focus);
	return !strncmp(name, focus, n) && (name[n] == 0 || name[n] == '(');
}

/* Nodes named focus with no ancestor of that name (so a recursive procedure's subtree is
 * shown once). */
static size_t focus_roots(const struct cp_view *v, const char *focus, uint32_t **out)
{
	size_t n = 0, alloc = 0;
	*out = NULL;
	for (uint32_t i = 1; i < v->n; i++) {
		const struct cp_vnode *x = &v->nodes[i];
		if ((x->kind != CP_VK_PROCEDURE && x->kind != CP_VK_INLINED) ||
		    !focus_match(x->name, focus))
			continue;
		int nested = 0;
		for (uint32_t a = x->parent; a != UINT32_MAX && !nested; a = v->nodes[a].parent)
			nested = (v->nodes[a].kind == CP_VK_PROCEDURE ||
				  v->nodes[a].kind == CP_VK_INLINED) &&
				 focus_match(v->nodes[a].name, focus);
		if (nested)
			continue;
		XGROW(*out, n + 1, alloc);
		(*out)[n++] = i;
	}
	return n;
}

int cp_render_select(struct cp_render *r)
{
	struct select_ctx c = {r, 0, NULL};
	uint64_t total = cp_view_incl(r->view, 0)[r->metric];
	c.min_incl = (uint64_t)((long double)total * r->threshold / 100.0L + 0.5L);
	if (r->threshold > 0 && c.min_incl == 0)
		c.min_incl = 1;
	row_add(r, 0, UINT32_MAX, 0);
	r->rows.rows[0].last = 1;
	if (!r->opt->focus) {
		select_children(&c, 0, 1);
		return 0;
	}
	uint32_t *roots;
	size_t n = focus_roots(r->view, r->opt->focus, &roots);
	if (!n) {
		free(roots);
		return cp_error(CP_ENOENT, "--focus %s: no procedure of that name in the profile",
				r->opt->focus);
	}
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (visible(&c, roots[i], 1))
			roots[k++] = roots[i];
	select_list(&c, roots, k, 0, 1);
	free(roots);
	return 0;
}

void cp_render_release(struct cp_render *r)
{
	free(r->rows.rows);
	memset(&r->rows, 0, sizeof r->rows);
}
