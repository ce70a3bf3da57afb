/* The bottom-up view summed over all threads, read lazily from the database's bottom-up
 * tables (db/query.h, docs/format.md), never built in memory: the procedures at the top
 * from `bu_proc`, and below a node the callers of the frames it stands for, found by
 * walking up from those frames when the node is expanded. The values are report's
 * (report/view-callers.c): a procedure's are those of its outermost frames (recursion
 * counted once, the exclusive values of nested frames credited to the outermost), and a
 * caller row adds the values of the outermost frames whose chain of callers it ends.
 *
 * Ids: "b<X>.<K>" is the node K levels below the top whose frames include the outermost
 * frame X, X being the smallest such frame (so the id is unique): "b<P>.0" is the
 * procedure whose first frame is P (its key). */
#include "view/model.h"

#include "base/error.h"
#include "base/xalloc.h"
#include "db/expr.h"
#include "db/query.h"

#include <stdlib.h>
#include <string.h>

int cp_web_bu_lazy(const struct cp_web_ctx *c)
{
	const struct cp_web_req *r = c->req;
	if (r->view != CP_WEB_BU || !cp_dbq_has_bu(c->m->q))
		return 0;
	return (r->stat == CP_DB_STAT_SUM && r->thread < 0 && r->rank < 0) || cp_web_sel_lazy(c);
}

/* An outermost frame of the procedure, with the frame its chain of callers has reached. */
struct occ {
	uint32_t x;
	struct cp_dbq_frame cur;
	int depth; /* chain levels matched (set) */
};

struct occs {
	struct occ *v;
	double *vals; /* per occurrence: nm inclusive then nm exclusive values */
	size_t n, alloc, nm;
	double *pv; /* a selection or statistic: per occurrence, each profile's raw inclusive
		     * then exclusive values (npv each), else NULL */
	size_t npv;
};

static int occ_add(void *arg, const struct cp_dbq_bu *b)
{
	struct occs *o = arg;
	if (o->n == o->alloc) {
		o->alloc = o->alloc ? o->alloc * 2 : 64;
		o->v = xrealloc(o->v, o->alloc * sizeof *o->v);
		o->vals = xrealloc(o->vals, o->alloc * o->nm * 2 * sizeof *o->vals);
	}
	o->v[o->n] = (struct occ){b->f.scope, b->f, 0};
	memcpy(o->vals + o->n * o->nm * 2, b->incl, o->nm * sizeof(double));
	memcpy(o->vals + o->n * o->nm * 2 + o->nm, b->excl, o->nm * sizeof(double));
	o->n++;
	return 0;
}

static void occs_release(struct occs *o)
{
	free(o->v);
	free(o->vals);
	free(o->pv);
}

/* One level of a chain of callers: the caller's procedure and the call site in it (none
 * for <partial call paths>, which ends a chain). */
struct link {
	uint32_t key, file, line;
};

static struct link link_of(const struct cp_dbq_frame *callee, const struct cp_dbq_frame *caller)
{
	if (caller->kind == CP_DBK_PARTIAL)
		return (struct link){caller->key, CP_DB_NONE, 0};
	return (struct link){caller->key, callee->file, callee->line};
}

static int link_eq(const struct link *a, const struct link *b)
{
	return a->key == b->key && a->file == b->file && a->line == b->line;
}

static int bu_occs_pv(struct cp_web_ctx *c, uint32_t key, struct occs *o);

/* The frames of node (x, k): chain[0..k) from frame x up; every outermost frame of its
 * procedure in o with depth = the levels of chain it matches, cur = the frame reached. */
static int bu_resolve(struct cp_web_ctx *c, uint32_t x, uint32_t k, struct occs *o,
		      struct link *chain)
{
	struct cp_dbq *q = c->m->q;
	struct cp_dbq_frame f, up;
	int rc = cp_dbq_bu_frame(q, x, &f);
	if (!rc && f.outer != x)
		rc = cp_error(CP_ENOENT, "no node b%u.%u", x, k);
	uint32_t key = f.key;
	for (uint32_t j = 0; j < k && !rc; j++, f = up) {
		if (f.caller == CP_DB_NONE)
			return cp_error(CP_ENOENT, "no node b%u.%u", x, k);
		if (!(rc = cp_dbq_bu_frame(q, f.caller, &up)))
			chain[j] = link_of(&f, &up);
	}
	o->nm = c->m->head.nmetrics;
	if (!rc)
		rc = cp_dbq_bu_outer(q, key, occ_add, o);
	if (!rc)
		rc = bu_occs_pv(c, key, o);
	for (size_t i = 0; i < o->n && !rc; i++) {
		struct occ *y = &o->v[i];
		while ((uint32_t)y->depth < k && y->cur.caller != CP_DB_NONE && !rc) {
			if ((rc = cp_dbq_bu_frame(q, y->cur.caller, &up)))
				break;
			struct link l = link_of(&y->cur, &up);
			if (!link_eq(&l, &chain[y->depth]))
				break;
			y->cur = up;
			y->depth++;
		}
	}
	return rc;
}

/* An occurrence's frame and its index, sorted by frame: the occurrence of an outermost frame. */
struct xi {
	uint32_t x, i;
};

static int xi_cmp(const void *a, const void *b)
{
	const struct xi *p = a, *q = b;
	return (p->x > q->x) - (p->x < q->x);
}

struct opv {
	struct cp_dbq *q;
	struct occs *o;
	const struct xi *at;
};

/* A frame of the procedure: its exclusive values are its outermost frame's occurrence's. */
static int opv_frame(void *arg, uint32_t scope, uint32_t outer)
{
	struct opv *t = arg;
	struct xi key = {outer, 0};
	const struct xi *hit = bsearch(&key, t->at, t->o->n, sizeof key, xi_cmp);
	if (!hit)
		return 0;
	double *ex = t->o->pv + ((size_t)hit->i * 2 + 1) * t->o->npv;
	return cp_dbq_threads_add(t->q, CP_DBQ_SCOPE, scope, NULL, ex);
}

/* With a selection or a statistic: each occurrence's values in every profile (o->pv), its
 * outermost frame's inclusive values and the exclusive values of the frames it holds (as
 * cp_dbq_bu_outer's sums), from scope_thread. */
static int bu_occs_pv(struct cp_web_ctx *c, uint32_t key, struct occs *o)
{
	if (!cp_web_sel_lazy(c))
		return 0;
	const struct cp_db *h = &c->m->head;
	o->npv = h->nprofiles * cp_db_nraw(h);
	o->pv = xcalloc(o->n * 2 * o->npv + 1, sizeof *o->pv);
	struct xi *at = xcalloc(o->n + 1, sizeof *at);
	int rc = 0;
	for (size_t i = 0; i < o->n && !rc; i++) {
		at[i] = (struct xi){o->v[i].x, (uint32_t)i};
		rc = cp_dbq_threads_add(c->m->q, CP_DBQ_SCOPE, o->v[i].x, o->pv + i * 2 * o->npv,
					NULL);
	}
	qsort(at, o->n, sizeof *at, xi_cmp);
	struct opv t = {c->m->q, o, at};
	if (!rc)
		rc = cp_dbq_bu_frames(c->m->q, key, opv_frame, &t);
	free(at);
	return rc;
}

/* The smallest frame matching at least k levels. */
static uint32_t bu_first(const struct occs *o, uint32_t k)
{
	for (size_t i = 0; i < o->n; i++)
		if ((uint32_t)o->v[i].depth >= k)
			return o->v[i].x;
	return CP_DB_NONE;
}

/* The frames of node id ("bX.K"): *chain its K links of callers (K + 1 entries, freed by
 * the caller even on failure) and o its procedure's outermost frames (bu_resolve). */
static int bu_node_occs(struct cp_web_ctx *c, const struct cp_web_node *id, struct occs *o,
			struct link **chain)
{
	uint32_t x = id->index, k = id->level - 1;
	*chain = NULL;
	if (k > 100000)
		return cp_error(CP_ENOENT, "no node b%u.%u", x, k);
	*chain = xcalloc(k + 1, sizeof **chain);
	int rc = bu_resolve(c, x, k, o, *chain);
	if (!rc && bu_first(o, k) != x)
		rc = cp_error(CP_ENOENT, "no node b%u.%u", x, k);
	return rc;
}

void cp_web_eval_db(const struct cp_web_ctx *c, struct cp_web_row *r)
{
	for (size_t i = 0; i < c->ms.ndb; i++)
		if (c->m->formulas[i]) {
			r->incl[i] = cp_expr_eval(c->m->formulas[i], r->incl);
			r->excl[i] = cp_expr_eval(c->m->formulas[i], r->excl);
		}
	cp_web_eval(c, r);
}

/* The row of a procedure (k = 0) or a caller (link l), frame f its frame. */
static void bu_row(const struct cp_web_ctx *c, const struct cp_dbq_frame *f, const struct link *l,
		   struct cp_web_row *r)
{
	const struct cp_db *h = &c->m->head;
	int partial = f->kind == CP_DBK_PARTIAL;
	r->kind = partial ? "partial" : l ? "caller" : "procedure";
	r->name = xstrdup(partial		? "<partial call paths>"
			  : f->proc < h->nprocs ? h->procs[f->proc].name
						: "<unknown procedure>");
	r->module =
	    !partial && f->module < h->nmodules ? xstrdup(h->modules[f->module].path) : NULL;
	r->file_id = l && l->file < h->nfiles ? l->file : CP_WEB_NONE;
	r->file = r->file_id != CP_WEB_NONE ? xstrdup(h->files[l->file].path) : NULL;
	r->line = l ? (int)l->line : 0;
	r->proc_id = !partial && f->proc < h->nprocs ? f->proc : CP_WEB_NONE;
	r->procedure = r->proc_id != CP_WEB_NONE ? xstrdup(r->name) : NULL;
}

/* A procedure's key and its flat procedure row. */
struct keymap {
	struct xi *v; /* x: the key, i: the flat_group id */
	size_t n, alloc;
};

struct top {
	struct cp_web_ctx *c;
	struct cp_web_row *out; /* one procedure, or fn for each */
	cp_web_row_fn fn;
	void *arg;
	const struct keymap *keys; /* listing every procedure: their flat rows, or NULL */
};

static int group_id(void *arg, const struct cp_dbq_group *g)
{
	*(uint32_t *)arg = g->id;
	return 0;
}

/* A procedure's values in the request's selection or statistic: its flat view row's
 * (flat_thread: the same values, recursion counted once), else those of its frames
 * (cp_web_bu_threads). 0 or a negative CP_E*. */
static int top_sel(struct cp_web_ctx *c, const struct keymap *keys, const struct cp_web_node *id,
		   struct cp_web_row *r)
{
	uint32_t g = CP_DB_NONE;
	struct xi want = {id->index, 0}, *hit = NULL;
	if (keys && keys->n)
		hit = bsearch(&want, keys->v, keys->n, sizeof want, xi_cmp);
	if (hit)
		g = hit->i;
	else if (cp_dbq_flat_groups(c->m->q, CP_DB_NONE, CP_DB_NONE, id->index, group_id, &g))
		g = CP_DB_NONE;
	if (g != CP_DB_NONE) {
		int rc = cp_web_sel_row(c, CP_DBQ_FLAT, g, r);
		return rc < 0 ? rc : 0;
	}
	cp_error_clear();
	const struct cp_db *h = &c->m->head;
	size_t n = h->nprofiles * cp_db_nraw(h);
	double *pv = xcalloc(2 * n + 1, sizeof *pv);
	int rc = cp_web_bu_threads(c, id, pv, pv + n);
	if (!rc)
		cp_web_sel_reduce(c, pv, pv + n, r);
	free(pv);
	return rc;
}

struct kwalk {
	struct keymap *map;
	uint32_t *below; /* modules and files to walk */
	size_t n, alloc;
};

static int keymap_add(void *arg, const struct cp_dbq_group *g)
{
	struct kwalk *w = arg;
	if (!strcmp(g->kind, "procedure")) {
		XGROW(w->map->v, w->map->n + 1, w->map->alloc);
		w->map->v[w->map->n++] = (struct xi){g->key, g->id};
	} else if (g->has_children) {
		XGROW(w->below, w->n + 1, w->alloc);
		w->below[w->n++] = g->id;
	}
	return 0;
}

/* The flat procedure rows below flat row `parent` (0: all): one query per module and file
 * (flat_group has no index on key: one query per procedure would scan it each time). */
static int keymap_load(struct cp_web_ctx *c, uint32_t parent, struct keymap *map)
{
	struct kwalk w = {map, NULL, 0, 0};
	int rc = cp_dbq_flat_groups(c->m->q, CP_DB_NONE, parent, CP_DB_NONE, keymap_add, &w);
	for (size_t i = 0; i < w.n && !rc; i++)
		rc = keymap_load(c, w.below[i], map);
	free(w.below);
	return rc;
}

static int top_row(void *arg, const struct cp_dbq_bu *b)
{
	struct top *t = arg;
	struct cp_web_row r, *out = t->out ? t->out : &r;
	memset(out, 0, sizeof *out);
	out->id = (struct cp_web_node){CP_WEB_BU, b->f.key, 0, 1, 0};
	out->has_parent = 1;
	out->parent = (struct cp_web_node){CP_WEB_BU, 0, 0, 0, 0};
	bu_row(t->c, &b->f, NULL, out);
	out->has_children = b->has_callers;
	memcpy(out->incl, b->incl, t->c->ms.ndb * sizeof(double));
	memcpy(out->excl, b->excl, t->c->ms.ndb * sizeof(double));
	int rc = 0;
	if (cp_web_sel_lazy(t->c))
		rc = top_sel(t->c, t->keys, &out->id, out);
	else
		cp_web_eval_db(t->c, out);
	if (rc || t->out) {
		if (rc)
			cp_web_row_release(out);
		return rc;
	}
	rc = t->fn(t->arg, &r);
	cp_web_row_release(&r);
	return rc;
}

/* Sums the values of the frames of o matching k levels (or those picked) into r, then its
 * formulas: each profile's values reduced to the request's selection or statistic when o
 * has them. (report's bottom-up view of a thread has every row of all threads' view, those
 * without a value there too.) */
static void bu_sum(const struct cp_web_ctx *c, const struct occs *o, uint32_t k, const int *pick,
		   struct cp_web_row *r)
{
	double *pv = o->pv ? xcalloc(2 * o->npv + 1, sizeof *pv) : NULL;
	for (size_t i = 0; i < o->n; i++) {
		if (pick ? !pick[i] : (uint32_t)o->v[i].depth < k)
			continue;
		const double *v = o->vals + i * o->nm * 2;
		for (size_t m = 0; m < o->nm; m++) {
			r->incl[m] += v[m];
			r->excl[m] += v[o->nm + m];
		}
		for (size_t j = 0; pv && j < 2 * o->npv; j++)
			pv[j] += o->pv[i * 2 * o->npv + j];
	}
	if (pv)
		cp_web_sel_reduce(c, pv, pv + o->npv, r);
	else
		cp_web_eval_db(c, r);
	free(pv);
}

/* The frame k levels of callers up from frame x (k > 0 levels exist). */
static int bu_up(struct cp_web_ctx *c, uint32_t x, uint32_t k, struct cp_dbq_frame *f)
{
	int rc = cp_dbq_bu_frame(c->m->q, x, f);
	for (uint32_t j = 0; j < k && !rc; j++)
		rc = cp_dbq_bu_frame(c->m->q, f->caller, f);
	return rc;
}

/* A <partial call paths> row's procedure is its parent's (as report's JSON has it). */
static void bu_partial_proc(struct cp_web_ctx *c, uint32_t x, uint32_t k, struct cp_web_row *r)
{
	struct cp_dbq_frame p;
	const struct cp_db *h = &c->m->head;
	if (bu_up(c, x, k - 1, &p) || p.kind == CP_DBK_PARTIAL || p.proc >= h->nprocs)
		return;
	r->proc_id = p.proc;
	r->procedure = xstrdup(h->procs[p.proc].name);
}

int cp_web_bu_node(struct cp_web_ctx *c, const struct cp_web_node *id, struct cp_web_row *out)
{
	uint32_t x = id->index, k = id->level - 1;
	struct top t = {c, out, NULL, NULL, NULL};
	if (k == 0)
		return cp_dbq_bu_procs(c->m->q, x, top_row, &t);
	struct link *chain;
	struct occs o = {0};
	int rc = bu_node_occs(c, id, &o, &chain);
	if (!rc) {
		memset(out, 0, sizeof *out);
		out->id = *id;
		out->has_parent = 1;
		out->parent = (struct cp_web_node){CP_WEB_BU, bu_first(&o, k - 1), 0, k, 0};
		for (size_t i = 0; i < o.n; i++) {
			const struct occ *y = &o.v[i];
			if (y->x == x)
				bu_row(c, &y->cur, &chain[k - 1], out);
			out->has_children |= (uint32_t)y->depth >= k && y->cur.caller != CP_DB_NONE;
		}
		if (!strcmp(out->kind, "partial"))
			bu_partial_proc(c, x, k, out);
		bu_sum(c, &o, k, NULL, out);
	}
	occs_release(&o);
	free(chain);
	return rc;
}

/* A caller of the frames of a node: its link, the occurrence and the caller's frame. */
struct edge {
	struct link l;
	uint32_t i; /* in occs */
	struct cp_dbq_frame up;
};

static int edge_cmp(const void *a, const void *b)
{
	const struct edge *x = a, *y = b;
	if (x->l.key != y->l.key)
		return x->l.key < y->l.key ? -1 : 1;
	if (x->l.file != y->l.file)
		return x->l.file < y->l.file ? -1 : 1;
	if (x->l.line != y->l.line)
		return x->l.line < y->l.line ? -1 : 1;
	return (x->i > y->i) - (x->i < y->i);
}

/* The caller rows of the group e[0..n) (same link), below node id. */
static int bu_emit(struct cp_web_ctx *c, const struct cp_web_node *id, const struct occs *o,
		   const struct edge *e, size_t n, int *pick, cp_web_row_fn fn, void *arg)
{
	struct cp_web_row r;
	memset(&r, 0, sizeof r);
	r.id = (struct cp_web_node){CP_WEB_BU, o->v[e[0].i].x, 0, id->level + 1, 0};
	r.has_parent = 1;
	r.parent = *id;
	bu_row(c, &e[0].up, &e[0].l, &r);
	const struct cp_dbq_frame *callee = &o->v[e[0].i].cur;
	if (e[0].up.kind == CP_DBK_PARTIAL && callee->kind != CP_DBK_PARTIAL &&
	    callee->proc < c->m->head.nprocs) {
		r.proc_id = callee->proc;
		r.procedure = xstrdup(c->m->head.procs[callee->proc].name);
	}
	memset(pick, 0, o->n * sizeof *pick);
	for (size_t j = 0; j < n; j++) {
		pick[e[j].i] = 1;
		r.has_children |= e[j].up.caller != CP_DB_NONE;
	}
	bu_sum(c, o, 0, pick, &r);
	int rc = fn(arg, &r);
	cp_web_row_release(&r);
	return rc;
}

static int bu_callers(struct cp_web_ctx *c, const struct cp_web_node *id, cp_web_row_fn fn,
		      void *arg)
{
	uint32_t k = id->level - 1;
	struct link *chain;
	struct occs o = {0};
	int rc = bu_node_occs(c, id, &o, &chain);
	struct edge *e = xcalloc(o.n + 1, sizeof *e);
	size_t n = 0;
	for (size_t i = 0; i < o.n && !rc; i++) {
		const struct occ *y = &o.v[i];
		if ((uint32_t)y->depth < k || y->cur.caller == CP_DB_NONE)
			continue;
		if (!(rc = cp_dbq_bu_frame(c->m->q, y->cur.caller, &e[n].up))) {
			e[n].l = link_of(&y->cur, &e[n].up);
			e[n++].i = (uint32_t)i;
		}
	}
	qsort(e, n, sizeof *e, edge_cmp);
	int *pick = xcalloc(o.n + 1, sizeof *pick);
	for (size_t a = 0, b; a < n && !rc; a = b) {
		for (b = a + 1; b < n && link_eq(&e[a].l, &e[b].l); b++)
			;
		rc = bu_emit(c, id, &o, e + a, b - a, pick, fn, arg);
	}
	free(pick);
	free(e);
	occs_release(&o);
	free(chain);
	return rc;
}

int cp_web_bu_children(struct cp_web_ctx *c, const struct cp_web_node *id, cp_web_row_fn fn,
		       void *arg)
{
	if (id->level)
		return bu_callers(c, id, fn, arg);
	if (id->index != 0 || id->noline)
		return cp_error(CP_ENOENT, "no node b%u", id->index);
	struct keymap keys = {0};
	struct top t = {c, NULL, fn, arg, cp_web_sel_lazy(c) ? &keys : NULL};
	int rc = t.keys ? keymap_load(c, 0, &keys) : 0;
	if (!rc) {
		if (keys.n)
			qsort(keys.v, keys.n, sizeof *keys.v, xi_cmp);
		rc = cp_dbq_bu_procs(c->m->q, CP_DB_NONE, top_row, &t);
	}
	free(keys.v);
	return rc;
}

/* ---- per-thread values of a node (/api/threads) -------------------------------------- */

struct bu_thr {
	struct cp_dbq *q;
	const uint32_t *outer; /* the node's outermost frames, sorted */
	size_t n;
	double *excl;
};

static int u32_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return (x > y) - (x < y);
}

/* A frame of the procedure: its exclusive values count when its outermost frame is one of
 * the node's (as bu_sum's sums). */
static int frame_excl(void *arg, uint32_t scope, uint32_t outer)
{
	struct bu_thr *t = arg;
	if (!bsearch(&outer, t->outer, t->n, sizeof *t->outer, u32_cmp))
		return 0;
	return cp_dbq_threads_add(t->q, CP_DBQ_SCOPE, scope, NULL, t->excl);
}

int cp_web_bu_threads(struct cp_web_ctx *c, const struct cp_web_node *id, double *incl,
		      double *excl)
{
	uint32_t k = id->level - 1;
	struct link *chain;
	struct occs o = {0};
	struct cp_dbq_frame f = {0};
	int rc = bu_node_occs(c, id, &o, &chain);
	if (!rc)
		rc = cp_dbq_bu_frame(c->m->q, id->index, &f);
	uint32_t *outer = xcalloc(o.n + 1, sizeof *outer);
	size_t n = 0;
	for (size_t i = 0; i < o.n && !rc; i++)
		if ((uint32_t)o.v[i].depth >= k) {
			outer[n++] = o.v[i].x;
			rc = cp_dbq_threads_add(c->m->q, CP_DBQ_SCOPE, o.v[i].x, incl, NULL);
		}
	qsort(outer, n, sizeof *outer, u32_cmp);
	struct bu_thr t = {c->m->q, outer, n, excl};
	if (!rc)
		rc = cp_dbq_bu_frames(c->m->q, f.key, frame_excl, &t);
	free(outer);
	occs_release(&o);
	free(chain);
	return rc;
}
