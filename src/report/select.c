/* Which rows of a view are shown, in which order. */
#include "report/render.h"

#include "base/error.h"
#include "base/strbuf.h"
#include "base/xalloc.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct select_ctx {
	struct cp_render *r;
	double min_incl;
	double min_alt; /* of r->hooks->alt_metric */
};

static const struct select_ctx *sort_ctx;

static int child_cmp(const void *a, const void *b)
{
	const struct cp_render *r = sort_ctx->r;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	const struct cp_vnode *nx = &r->view->nodes[x], *ny = &r->view->nodes[y];
	if (r->opt->sort != CP_SORT_NAME) {
		int incl = r->opt->sort == CP_SORT_INCLUSIVE;
		size_t m = r->sort_metric;
		double vx = (incl ? cp_view_incl(r->view, x) : cp_view_excl(r->view, x))[m];
		double vy = (incl ? cp_view_incl(r->view, y) : cp_view_excl(r->view, y))[m];
		if (isnan(vx) != isnan(vy))
			return isnan(vx) ? 1 : -1; /* no value: last */
		if (!isnan(vx) && vx != vy)
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
	double v = cp_view_incl(r->view, node)[r->metric];
	if (r->hooks && r->hooks->alt_metric != SIZE_MAX &&
	    cp_view_incl(r->view, node)[r->hooks->alt_metric] >= c->min_alt)
		return 1;
	return isnan(v) || v >= c->min_incl;
}

/* The visible children of node (shown at depth), sorted; *n gets their number. */
static uint32_t *visible_children(struct select_ctx *c, uint32_t node, int depth, size_t *n)
{
	const struct cp_view *v = c->r->view;
	size_t k = 0, alloc = 0;
	uint32_t *kids = NULL;
	for (uint32_t x = v->nodes[node].first_child; x != UINT32_MAX; x = v->nodes[x].next_sibling)
		if (visible(c, x, depth)) {
			XGROW(kids, k + 1, alloc);
			kids[k++] = x;
		}
	sort_ctx = c;
	if (k)
		qsort(kids, k, sizeof(*kids), child_cmp);
	*n = k;
	return kids;
}

struct level {
	uint32_t *kids;
	size_t n, i;
	uint32_t parent;
	int depth;
};

/* Pre-order over the shown nodes with an explicit stack: trees can be as deep as stacks. */
static void select_tree(struct select_ctx *c, uint32_t *kids, size_t n, uint32_t parent, int depth)
{
	struct level *stack = NULL;
	size_t top = 0, alloc = 0;
	sort_ctx = c;
	if (n)
		qsort(kids, n, sizeof(*kids), child_cmp);
	XGROW(stack, 1, alloc);
	stack[top++] = (struct level){kids, n, 0, parent, depth};
	while (top) {
		struct level *l = &stack[top - 1];
		if (l->i == l->n) {
			if (top > 1)
				free(l->kids);
			top--;
			continue;
		}
		uint32_t node = l->kids[l->i++];
		int d = l->depth;
		row_add(c->r, node, l->parent, d);
		c->r->rows.rows[c->r->rows.n - 1].last = l->i == l->n;
		size_t k;
		uint32_t *sub = visible_children(c, node, d + 1, &k);
		if (!k) {
			free(sub);
			continue;
		}
		XGROW(stack, top + 1, alloc);
		stack[top++] = (struct level){sub, k, 0, node, d + 1};
	}
	free(stack);
}

static int focus_match(const char *name, const char *focus)
{
	size_t n = strlen(focus);
	return !strncmp(name, focus, n) && (name[n] == 0 || name[n] == '(');
}

static int is_frame(const struct cp_vnode *x)
{
	return x->kind == CP_VK_PROCEDURE || x->kind == CP_VK_INLINED;
}

/* Nodes named focus with no ancestor of that name (so a recursive procedure's subtree is
 * shown once). Parents precede their children in a view. */
static size_t focus_roots(const struct cp_view *v, const char *focus, uint32_t **out)
{
	size_t n = 0, alloc = 0;
	uint8_t *inside = xcalloc(v->n, 1); /* a node named focus is this node or above it */
	*out = NULL;
	for (uint32_t i = 1; i < v->n; i++) {
		const struct cp_vnode *x = &v->nodes[i];
		int match = is_frame(x) && focus_match(x->name, focus);
		int above = x->parent != UINT32_MAX && inside[x->parent];
		inside[i] = match || above;
		if (!match || above)
			continue;
		XGROW(*out, n + 1, alloc);
		(*out)[n++] = i;
	}
	free(inside);
	return n;
}

double cp_render_min_incl(double total, double threshold)
{
	double min = total * threshold / 100.0;
	return threshold > 0 && !(min > 0) ? 1e-300 : min;
}

/* --flatten: each node of the set that has shown children is replaced by them, n times. */
static size_t flatten(struct select_ctx *c, uint32_t **set, size_t n, int times)
{
	const struct cp_view *v = c->r->view;
	for (int t = 0; t < times; t++) {
		uint32_t *next = NULL;
		size_t k = 0, alloc = 0;
		for (size_t i = 0; i < n; i++) {
			size_t added = 0;
			for (uint32_t x = v->nodes[(*set)[i]].first_child; x != UINT32_MAX;
			     x = v->nodes[x].next_sibling)
				if (visible(c, x, 1)) {
					XGROW(next, k + 1, alloc);
					next[k++] = x;
					added++;
				}
			if (!added) {
				XGROW(next, k + 1, alloc);
				next[k++] = (*set)[i];
			}
		}
		free(*set);
		*set = next;
		n = k;
	}
	return n;
}

/* --hot-path: the nodes of kids (sorted) are shown; the hottest one is expanded when it keeps
 * at least hot_path % of its parent's inclusive value, and so on down. */
static void select_hot(struct select_ctx *c, uint32_t *kids, size_t n, uint32_t parent, int depth)
{
	struct cp_render *r = c->r;
	const struct cp_view *v = r->view;
	while (n) {
		sort_ctx = c;
		qsort(kids, n, sizeof(*kids), child_cmp);
		uint32_t hot = UINT32_MAX;
		double best = -1;
		for (size_t i = 0; i < n; i++) {
			double x = cp_view_incl(v, kids[i])[r->metric];
			if (!isnan(x) && x > best)
				best = x, hot = kids[i];
		}
		double pin = cp_view_incl(v, parent)[r->metric];
		if (hot != UINT32_MAX && !(pin > 0 && best >= pin * r->opt->hot_path / 100.0))
			hot = UINT32_MAX;
		size_t hot_row = SIZE_MAX;
		for (size_t i = 0; i < n; i++) {
			row_add(r, kids[i], parent, depth);
			r->rows.rows[r->rows.n - 1].last = i + 1 == n;
			if (kids[i] == hot)
				hot_row = r->rows.n - 1;
		}
		free(kids);
		kids = NULL;
		n = 0;
		if (hot == UINT32_MAX || (r->opt->depth > 0 && depth + 1 > r->opt->depth))
			break;
		r->hot[hot] = 1;
		/* the hot node's children go right after its row: move the rows after it down */
		size_t k;
		uint32_t *sub = visible_children(c, hot, depth + 1, &k);
		if (!k) {
			free(sub);
			break;
		}
		size_t tail = r->rows.n - hot_row - 1;
		struct cp_row *save = NULL;
		if (tail) {
			save = xmalloc(tail * sizeof(*save));
			memcpy(save, r->rows.rows + hot_row + 1, tail * sizeof(*save));
			r->rows.n = hot_row + 1;
		}
		select_hot(c, sub, k, hot, depth + 1);
		for (size_t i = 0; i < tail; i++) {
			XGROW(r->rows.rows, r->rows.n + 1, r->rows.alloc);
			r->rows.rows[r->rows.n++] = save[i];
		}
		free(save);
		break;
	}
	free(kids);
}

int cp_render_select(struct cp_render *r)
{
	struct select_ctx c = {r, 0, 0};
	c.min_incl = cp_render_min_incl(cp_view_incl(r->view, 0)[r->metric], r->threshold);
	if (r->hooks && r->hooks->alt_metric != SIZE_MAX)
		c.min_alt = cp_render_min_incl(cp_view_incl(r->view, 0)[r->hooks->alt_metric],
					       r->threshold);
	row_add(r, 0, UINT32_MAX, 0);
	r->rows.rows[0].last = 1;
	uint32_t *roots;
	size_t n;
	if (!r->opt->focus) {
		roots = visible_children(&c, 0, 1, &n);
	} else {
		n = focus_roots(r->view, r->opt->focus, &roots);
		if (!n) {
			free(roots);
			return cp_error(CP_ENOENT,
					"--focus %s: no procedure of that name in the profile",
					r->opt->focus);
		}
		size_t k = 0;
		for (size_t i = 0; i < n; i++)
			if (visible(&c, roots[i], 1))
				roots[k++] = roots[i];
		n = k;
	}
	if (r->opt->flatten > 0)
		n = flatten(&c, &roots, n, r->opt->flatten);
	if (r->opt->hot_path >= 0) {
		free(r->hot);
		r->hot = xcalloc(r->view->n + 1, 1);
		r->hot[0] = 1;
		select_hot(&c, roots, n, 0, 1);
		return 0;
	}
	select_tree(&c, roots, n, 0, 1);
	free(roots);
	return 0;
}

void cp_render_release(struct cp_render *r)
{
	free(r->rows.rows);
	memset(&r->rows, 0, sizeof r->rows);
	free(r->via);
	r->via = NULL;
	free(r->hot);
	r->hot = NULL;
}

void cp_render_truncate(struct cp_render *r, size_t n)
{
	if (n >= r->rows.n)
		return;
	r->rows.n = n;
	/* A row is last when no later row shares its parent (rows are in pre-order). */
	for (size_t i = 0; i < n; i++) {
		struct cp_row *row = &r->rows.rows[i];
		row->last = 1;
		for (size_t j = i + 1; j < n && r->rows.rows[j].depth >= row->depth; j++)
			if (r->rows.rows[j].depth == row->depth) {
				row->last = 0;
				break;
			}
	}
}

void cp_render_fold_chain(struct cp_render *r)
{
	struct cp_row *rows = r->rows.rows;
	size_t n = r->rows.n, j = 1;
	/* rows[j] is the only child of its parent; fold it while all its cost goes to its only
	 * shown child. */
	while (j + 1 < n && rows[j + 1].depth == rows[j].depth + 1 && rows[j + 1].last &&
	       cp_view_incl(r->view, rows[j + 1].node)[r->metric] ==
		   cp_view_incl(r->view, rows[j].node)[r->metric])
		j++;
	if (j == 1 || rows[1].depth != 1 || !rows[1].last)
		return;
	struct strbuf sb;
	strbuf_init(&sb);
	for (size_t i = 1; i < j; i++)
		strbuf_addf(&sb, "%s%s", i > 1 ? " > " : "", r->view->nodes[rows[i].node].name);
	free(r->via);
	r->via = strbuf_detach(&sb);
	int shift = rows[j].depth - 1;
	memmove(rows + 1, rows + j, (n - j) * sizeof(*rows));
	r->rows.n = n - (j - 1);
	rows[1].parent = 0;
	for (size_t i = 1; i < r->rows.n; i++)
		rows[i].depth -= shift;
}
