/* The flat view summed over all threads, read lazily from the database (db/query.h,
 * docs/format.md "The flat tables"): load modules, files and procedures from `flat_group`;
 * below a procedure, its loops and statements from the bodies of its frames, read when the
 * procedure (or a loop) is expanded. The values are report's (report/view-flat.c):
 *
 * Each cost of a frame's body is an *item*: a statement (or a scope's own cost without a
 * line: `<no line>`) with its loops, or a call with the loops around the call site (its
 * inclusive value, on the call site's statement row). An item adds to every row along its
 * path of loops and statement: to the exclusive values unless it is a call, and to the
 * inclusive values unless a call of an enclosing frame of the same procedure has that row
 * on its path too (the same samples: report counts a sample once per row).
 *
 * Ids: "fG.g" is group G of `flat_group`; "fP.H" the row below the procedure whose first
 * frame is P with the path (loops, statement) whose hash is H. */
#include "view/model.h"

#include "base/error.h"
#include "base/hash.h"
#include "base/xalloc.h"
#include "db/query.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cp_web_flat_lazy(const struct cp_web_ctx *c)
{
	const struct cp_web_req *r = c->req;
	if (r->view != CP_WEB_FLAT || !cp_dbq_has_flat(c->m->q))
		return 0;
	return (r->stat == CP_DB_STAT_SUM && r->thread < 0 && r->rank < 0) || cp_web_sel_lazy(c);
}

/* A step of a path below a procedure: a loop, or the statement (file:line; <no line> when
 * neither is known) that ends it. */
struct tok {
	uint32_t loop; /* 1 loop, 0 statement */
	uint32_t file, lo, hi, module;
	uint64_t addr;
	uint32_t scope, frame; /* a scope it comes from (a loop's name) */
};

struct item {
	uint32_t frame;
	int call;
	size_t first, n; /* its path: toks[first .. first+n) */
	size_t vals;	 /* its values: vals[vals .. vals+nm) */
};

/* A scope of a body. */
struct bscope {
	uint32_t id, frame, nkids;
	uint32_t item; /* its item, or UINT32_MAX */
	struct cp_db_scope s;
	size_t vals; /* incl: vals[vals..], sum of its children's: vals[vals + nm..] */
};

struct fview {
	struct cp_web_ctx *c;
	uint32_t key;
	int64_t thread, rank; /* the selection its values are of (-1: all threads) */
	int stat;	      /* with a statistic: pv and ipv */
	size_t nm, npv;	      /* npv: profiles * raw metrics */
	double *pv;	      /* per body scope: each profile's raw inclusive values (npv) */
	double *ipv;	      /* per item: each profile's raw values (npv) */
	struct bscope *b;
	size_t nb, ab;
	struct item *it;
	size_t nit, ait;
	struct tok *toks;
	size_t ntoks, atoks;
	double *vals;
	size_t nvals, avals;
	uint32_t **cover; /* per body scope that is a frame: items of enclosing calls, UINT32_MAX
			   * terminated */
};

/* Room for n more values (v->vals may move). */
static void vals_reserve(struct fview *v, size_t n)
{
	if (v->nvals + n > v->avals) {
		v->avals = (v->nvals + n) * 2;
		v->vals = xrealloc(v->vals, v->avals * sizeof *v->vals);
	}
}

static size_t vals_new(struct fview *v, size_t n)
{
	vals_reserve(v, n);
	memset(v->vals + v->nvals, 0, n * sizeof *v->vals);
	v->nvals += n;
	return v->nvals - n;
}

static int body_add(void *arg, const struct cp_dbq_body *r)
{
	struct fview *v = arg;
	XGROW(v->b, v->nb + 1, v->ab);
	struct bscope *b = &v->b[v->nb++];
	b->id = r->id;
	b->frame = r->frame;
	b->s = r->s;
	b->nkids = 0;
	b->item = UINT32_MAX;
	b->vals = vals_new(v, v->nm * 2);
	memcpy(v->vals + b->vals, r->incl, v->nm * sizeof(double));
	return 0;
}

/* Body scope id of frame's body (the scopes are sorted by id, then frame). */
static struct bscope *bfind(struct fview *v, uint32_t id, uint32_t frame)
{
	size_t lo = 0, hi = v->nb;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		const struct bscope *m = &v->b[mid];
		if (m->id < id || (m->id == id && m->frame < frame))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < v->nb && v->b[lo].id == id && v->b[lo].frame == frame ? &v->b[lo] : NULL;
}

static int is_frame(const struct bscope *b)
{
	return b->id == b->frame;
}

static struct tok loop_tok(const struct bscope *b)
{
	const struct cp_db_scope *s = &b->s;
	struct tok t = {1,     s->file, s->line_lo ? s->line_lo : s->line, s->line_hi, 0, 0,
			b->id, b->frame};
	if (t.file == CP_DB_NONE && !t.lo) {
		t.module = s->module;
		t.addr = s->addr;
	}
	return t;
}

/* An item of body scope b: its loops (from the frame down) and statement. */
static void item_add(struct fview *v, struct bscope *b, int call, int has_stmt, struct tok stmt,
		     const double *cost)
{
	int any = 0;
	for (size_t m = 0; m < v->nm; m++)
		any |= cost[m] != 0 && !isnan(cost[m]);
	if (!any)
		return; /* report sees no sample here */
	size_t first = v->ntoks, n = 0;
	for (const struct bscope *a = b; a && !is_frame(a); a = bfind(v, a->s.parent, a->frame)) {
		if (a->s.kind != CP_DBK_LOOP)
			continue;
		XGROW(v->toks, v->ntoks + 1, v->atoks);
		v->toks[v->ntoks++] = loop_tok(a);
		n++;
	}
	for (size_t i = 0; i < n / 2; i++) { /* outermost first */
		struct tok t = v->toks[first + i];
		v->toks[first + i] = v->toks[first + n - 1 - i];
		v->toks[first + n - 1 - i] = t;
	}
	if (has_stmt) {
		XGROW(v->toks, v->ntoks + 1, v->atoks);
		v->toks[v->ntoks++] = stmt;
		n++;
	}
	XGROW(v->it, v->nit + 1, v->ait);
	b->item = (uint32_t)v->nit;
	struct item *it = &v->it[v->nit++];
	it->frame = b->frame;
	it->call = call;
	it->first = first;
	it->n = n;
	it->vals = vals_new(v, v->nm);
	memcpy(v->vals + it->vals, cost, v->nm * sizeof(double));
}

static void items_make(struct fview *v)
{
	size_t nm = v->nm;
	for (size_t i = 0; i < v->nb; i++) {
		struct bscope *b = &v->b[i],
			      *p = is_frame(b) ? NULL : bfind(v, b->s.parent, b->frame);
		if (p) {
			p->nkids++;
			for (size_t m = 0; m < nm; m++)
				v->vals[p->vals + nm + m] += v->vals[b->vals + m];
		}
	}
	double *own = xcalloc(nm + 1, sizeof *own);
	vals_reserve(v, v->nb * nm); /* an item each at most: `in` below stays where it is */
	for (size_t i = 0; i < v->nb; i++) {
		struct bscope *b = &v->b[i];
		/* Copied: item_add grows v->vals, which in points into. */
		const double *in = v->vals + b->vals, *kids = in + nm;
		struct tok none = {0, CP_DB_NONE, 0, 0, 0, 0, b->id, b->frame};
		int call = !is_frame(b) && b->s.kind == CP_DBK_PROC;
		if (call ||
		    (!b->nkids && b->s.kind == CP_DBK_STMT &&
		     (b->s.file != CP_DB_NONE || b->s.line > 0))) { /* a call, a statement */
			struct tok at = {0, b->s.file, b->s.line, 0, 0, 0, b->id, b->frame};
			memcpy(own, in, nm * sizeof *own);
			item_add(v, b, call, !call || b->s.file != CP_DB_NONE || b->s.line > 0, at,
				 own);
			continue;
		}
		for (size_t m = 0; m < nm; m++) { /* own cost: <no line> */
			own[m] = b->nkids ? in[m] - kids[m] : in[m];
			if (b->nkids && !(fabs(own[m]) > 1e-9 * fabs(in[m])))
				own[m] = 0;
		}
		item_add(v, b, 0, 1, none, own);
	}
	free(own);
}

static int tok_eq(const struct tok *a, const struct tok *b)
{
	return a->loop == b->loop && a->file == b->file && a->lo == b->lo && a->hi == b->hi &&
	       a->module == b->module && a->addr == b->addr;
}

static uint64_t tok_hash(uint64_t h, const struct tok *t)
{
	uint32_t f[] = {t->loop, t->file, t->lo, t->hi, t->module};
	h = cp_fnv1a(h, f, sizeof f);
	return cp_fnv1a(h, &t->addr, sizeof t->addr);
}

/* Whether path a[0..n) is a prefix of item x's path. */
static int has_prefix(const struct fview *v, const struct item *x, const struct tok *a, size_t n)
{
	if (x->n < n)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!tok_eq(&v->toks[x->first + i], &a[i]))
			return 0;
	return 1;
}

/* Walks from frame to frame up the callers, remembering where each leads (frames of one
 * procedure share most of their chains of callers). */
struct walk {
	struct cp_hashtab tab;
	struct wentry {
		uint32_t frame, fup, callee; /* fup: the nearest frame of the procedure above */
	} * v;
	size_t n, alloc;
};

static int went_eq(const void *ctx, uint32_t idx, const void *key)
{
	return ((const struct walk *)ctx)->v[idx].frame == *(const uint32_t *)key;
}

static void walk_put(struct walk *w, uint32_t frame, uint32_t fup, uint32_t callee)
{
	XGROW(w->v, w->n + 1, w->alloc);
	w->v[w->n] = (struct wentry){frame, fup, callee};
	cp_hashtab_insert(&w->tab, cp_hash_u64(frame), (uint32_t)w->n++);
}

/* The call in frame *fup (of the same procedure) that leads to frame f: 1 when f is an
 * outermost frame (none), 0, or a negative CP_E*. */
static int enclosing(struct fview *v, struct walk *w, uint32_t f, uint32_t *fup, uint32_t *callee)
{
	struct cp_dbq_frame up;
	int rc = cp_dbq_bu_frame(v->c->m->q, f, &up);
	if (rc || up.outer == f)
		return rc ? rc : 1;
	uint32_t path[64], np = 0, at = f;
	*callee = f;
	for (;;) {
		uint32_t hit = cp_hashtab_find(&w->tab, cp_hash_u64(at), went_eq, w, &at);
		if (hit != CP_HASH_NONE) {
			*fup = w->v[hit].fup;
			*callee = at == f || w->v[hit].callee != at ? w->v[hit].callee : at;
			break;
		}
		if (np < 64)
			path[np++] = at;
		if ((rc = cp_dbq_bu_frame(v->c->m->q, up.caller, &up)))
			return rc;
		if (up.key == v->key) {
			*fup = up.scope;
			break;
		}
		*callee = at = up.scope;
	}
	for (uint32_t i = 0; i < np; i++)
		walk_put(w, path[i], *fup, i + 1 < np ? *callee : path[i]);
	return 0;
}

/* Per frame: the items of the calls of enclosing frames of the same procedure. */
static int covers_make(struct fview *v)
{
	struct walk w = {0};
	cp_hashtab_init(&w.tab);
	v->cover = xcalloc(v->nb + 1, sizeof *v->cover);
	int rc = 0;
	for (size_t i = 0; i < v->nb && rc >= 0; i++) {
		uint32_t fup = CP_DB_NONE, callee = CP_DB_NONE;
		if (!is_frame(&v->b[i]))
			continue;
		rc = enclosing(v, &w, v->b[i].id, &fup, &callee);
		const struct bscope *fu = rc ? NULL : bfind(v, fup, fup);
		const struct bscope *call = rc ? NULL : bfind(v, callee, fup);
		const uint32_t *outer = fu ? v->cover[fu - v->b] : NULL;
		size_t n = 0;
		while (outer && outer[n] != UINT32_MAX)
			n++;
		uint32_t *c = v->cover[i] = xmalloc((n + 2) * sizeof *c);
		size_t k = 0;
		if (call && call->item != UINT32_MAX)
			c[k++] = call->item;
		for (size_t j = 0; j < n; j++)
			c[k + j] = outer[j];
		c[k + n] = UINT32_MAX;
	}
	cp_hashtab_release(&w.tab);
	free(w.v);
	return rc < 0 ? rc : 0;
}

static void fview_free(struct fview *v)
{
	for (size_t i = 0; v->cover && i < v->nb; i++)
		free(v->cover[i]);
	free(v->cover);
	free(v->b);
	free(v->it);
	free(v->toks);
	free(v->vals);
	free(v->pv);
	free(v->ipv);
}

/* Which values an fview holds: those of the selected thread or rank (-1: all), and with pv
 * each profile's values of its items too. */
struct fsel {
	int64_t thread, rank;
	int pv;
};

/* Each body scope's raw inclusive values in every profile (v->pv); with a selection, the
 * scopes' values become the selected profiles' sums (then items_make makes the rows of
 * the selection, as report's view of those threads has them). */
static int sel_load(struct fview *v, const struct fsel *sel)
{
	size_t npv = v->npv;
	v->pv = xcalloc(v->nb * npv + 1, sizeof *v->pv);
	int rc = 0;
	for (size_t i = 0; i < v->nb && !rc; i++)
		rc =
		    cp_dbq_threads_add(v->c->m->q, CP_DBQ_SCOPE, v->b[i].id, v->pv + i * npv, NULL);
	for (size_t i = 0; i < v->nb && !rc && (sel->thread >= 0 || sel->rank >= 0); i++) {
		struct cp_web_row r;
		memset(&r, 0, sizeof r);
		cp_web_sel_reduce(v->c, v->pv + i * npv, NULL, &r);
		memcpy(v->vals + v->b[i].vals, r.incl, v->nm * sizeof(double));
	}
	return rc;
}

/* Each profile's values of each item (v->ipv), as items_make takes the sums: a call's and
 * a childless scope's inclusive value, else its own (inclusive less its children's). */
static void items_pv(struct fview *v)
{
	size_t npv = v->npv;
	double *kids = xcalloc(v->nb * npv + 1, sizeof *kids);
	for (size_t i = 0; i < v->nb; i++) {
		const struct bscope *b = &v->b[i],
				    *p = is_frame(b) ? NULL : bfind(v, b->s.parent, b->frame);
		for (size_t j = 0; p && j < npv; j++)
			kids[(size_t)(p - v->b) * npv + j] += v->pv[i * npv + j];
	}
	v->ipv = xcalloc(v->nit * npv + 1, sizeof *v->ipv);
	for (size_t i = 0; i < v->nb; i++) {
		const struct bscope *b = &v->b[i];
		if (b->item == UINT32_MAX)
			continue;
		const double *in = v->pv + i * npv, *k = kids + i * npv;
		double *out = v->ipv + (size_t)b->item * npv;
		int own = !v->it[b->item].call && b->nkids;
		for (size_t j = 0; j < npv; j++) {
			double x = own ? in[j] - k[j] : in[j];
			out[j] = !own || fabs(x) > 1e-9 * fabs(in[j]) ? x : 0;
		}
	}
	free(kids);
}

static int fview_load(struct cp_web_ctx *c, uint32_t key, const struct fsel *sel, struct fview *v)
{
	memset(v, 0, sizeof *v);
	v->c = c;
	v->key = key;
	v->thread = sel->thread;
	v->rank = sel->rank;
	v->stat = sel->pv;
	v->nm = c->m->head.nmetrics;
	v->npv = c->m->head.nprofiles * cp_db_nraw(&c->m->head);
	int rc = cp_dbq_flat_bodies(c->m->q, key, body_add, v);
	if (!rc && !bfind(v, key, key))
		rc = cp_error(CP_ENOENT, "no procedure %u", key);
	if (!rc && (sel->pv || sel->thread >= 0 || sel->rank >= 0))
		rc = sel_load(v, sel);
	if (!rc)
		items_make(v);
	if (!rc && sel->pv)
		items_pv(v);
	if (!rc)
		rc = covers_make(v);
	return rc;
}

void cp_web_flat_release(struct cp_web_model *m)
{
	if (m->flat)
		fview_free(m->flat);
	free(m->flat);
	m->flat = NULL;
}

/* The rows of procedure key: the model keeps the last one (an expansion asks for the node
 * and then its children; the next expansion is often in the same procedure). sel NULL: the
 * request's selection. */
static int fview_get(struct cp_web_ctx *c, uint32_t key, const struct fsel *sel, struct fview **out)
{
	struct cp_web_model *m = c->m;
	struct fsel rq = {c->req->thread, c->req->rank, c->req->stat != CP_DB_STAT_SUM};
	sel = sel ? sel : &rq;
	if (m->flat && m->flat->key == key && m->flat->thread == sel->thread &&
	    m->flat->rank == sel->rank && (m->flat->stat || !sel->pv)) {
		m->flat->c = c;
		*out = m->flat;
		return 0;
	}
	cp_web_flat_release(m);
	struct fview *v = xcalloc(1, sizeof *v);
	int rc = fview_load(c, key, sel, v);
	if (rc) {
		fview_free(v);
		free(v);
		return rc;
	}
	*out = m->flat = v;
	return 0;
}

/* Whether an enclosing call of item x's frame has the path a[0..n) too. */
static int covered(struct fview *v, const struct item *x, const struct tok *a, size_t n)
{
	const struct bscope *f = bfind(v, x->frame, x->frame);
	const uint32_t *c = f ? v->cover[f - v->b] : NULL;
	for (; c && *c != UINT32_MAX; c++)
		if (has_prefix(v, &v->it[*c], a, n))
			return 1;
	return 0;
}

static uint64_t path_hash(const struct tok *a, size_t n)
{
	uint64_t h = CP_FNV1A_INIT;
	for (size_t i = 0; i < n; i++)
		h = tok_hash(h, &a[i]);
	return h;
}

static int is_no_line(const struct tok *t)
{
	return !t->loop && t->file == CP_DB_NONE && !t->lo;
}

/* Fills r with the row of path a[0..n) (n >= 1) below the procedure. */
static void path_row(struct fview *v, const struct tok *a, size_t n, struct cp_web_row *r)
{
	const struct cp_db *h = &v->c->m->head;
	const struct tok *t = &a[n - 1];
	const struct bscope *key = bfind(v, v->key, v->key);
	r->id = (struct cp_web_node){CP_WEB_FLAT, v->key, 0, 2, path_hash(a, n)};
	r->has_parent = 1;
	r->kind = t->loop ? "loop" : "line";
	if (t->loop) {
		r->name = cp_web_scope_name(h, &bfind(v, t->scope, t->frame)->s);
	} else if (is_no_line(t)) {
		r->name = xstrdup("<no line>");
	} else {
		struct cp_db_scope s = {.kind = CP_DBK_STMT, .file = t->file, .line = t->lo};
		r->name = cp_web_scope_name(h, &s);
	}
	uint32_t mod = key->s.module, proc = key->s.proc;
	r->module = mod < h->nmodules ? xstrdup(h->modules[mod].path) : NULL;
	r->file_id = t->file < h->nfiles ? t->file : CP_WEB_NONE;
	r->file = r->file_id != CP_WEB_NONE ? xstrdup(h->files[t->file].path) : NULL;
	r->line = (int)t->lo;
	r->line_end = t->loop ? (int)t->hi : 0;
	r->proc_id = proc < h->nprocs ? proc : CP_WEB_NONE;
	r->procedure = r->proc_id != CP_WEB_NONE ? xstrdup(h->procs[proc].name) : NULL;
}

/* A row below a path being listed: its step, values and what is below it. */
struct kid {
	struct tok t;
	size_t vals; /* nm inclusive, nm exclusive (in the fview's vals) */
	const struct tok *next;
	int more;
	double *pv; /* with a statistic: each profile's inclusive, then exclusive values */
};

static struct kid *kid_of(struct fview *v, struct kid **k, size_t *nk, size_t *ak,
			  const struct tok *t)
{
	for (size_t j = *nk; j-- > 0;)
		if (tok_eq(&(*k)[j].t, t))
			return &(*k)[j];
	XGROW(*k, *nk + 1, *ak);
	struct kid *x = &(*k)[(*nk)++];
	*x = (struct kid){*t, vals_new(v, v->nm * 2), NULL, 0, NULL};
	if (v->c->req->stat != CP_DB_STAT_SUM)
		x->pv = xcalloc(2 * v->npv + 1, sizeof *x->pv);
	return x;
}

/* Adds item x to the row below path a[0..n) on its way (path[n] its step). */
static void kid_add(struct fview *v, struct kid *k, const struct item *x, struct tok *path,
		    size_t n)
{
	path[n] = k->t;
	const double *val = v->vals + x->vals;
	int cov = covered(v, x, path, n + 1);
	double *kv = v->vals + k->vals;
	for (size_t m = 0; m < v->nm; m++) {
		kv[m] += cov ? 0 : val[m];
		kv[v->nm + m] += x->call ? 0 : val[m];
	}
	const double *pv = k->pv ? v->ipv + (x - v->it) * v->npv : NULL;
	for (size_t j = 0; pv && j < v->npv; j++) {
		k->pv[j] += cov ? 0 : pv[j];
		k->pv[v->npv + j] += x->call ? 0 : pv[j];
	}
	if (x->n > n + 1) {
		const struct tok *t = &v->toks[x->first + n + 1];
		k->more |= k->next && !tok_eq(k->next, t);
		k->next = k->next ? k->next : t;
	}
}

static int kid_emit(struct fview *v, const struct kid *k, struct tok *path, size_t n,
		    const struct cp_web_node *parent, cp_web_row_fn fn, void *arg)
{
	struct cp_web_row r;
	memset(&r, 0, sizeof r);
	path[n] = k->t;
	path_row(v, path, n + 1, &r);
	r.parent = *parent;
	memcpy(r.incl, v->vals + k->vals, v->nm * sizeof(double));
	memcpy(r.excl, v->vals + k->vals + v->nm, v->nm * sizeof(double));
	/* a <no line> statement alone below a procedure or loop is left out (as report) */
	r.has_children = k->more || (k->next && !is_no_line(k->next));
	if (k->pv)
		cp_web_sel_reduce(v->c, k->pv, k->pv + v->npv, &r);
	else
		cp_web_eval_db(v->c, &r);
	int rc = fn(arg, &r);
	cp_web_row_release(&r);
	return rc;
}

/* The rows below path a[0..n) (n = 0: the procedure, row id parent): fn for each, or only for
 * the one with hash `only` (when want_one: 1 when found). */
static int path_kids(struct fview *v, const struct tok *a, size_t n,
		     const struct cp_web_node *parent, cp_web_row_fn fn, void *arg, int want_one,
		     uint64_t only)
{
	struct tok *path = xcalloc(n + 2, sizeof *path);
	memcpy(path, a, n * sizeof *path);
	size_t mark = v->nvals, nk = 0, ak = 0;
	struct kid *k = NULL;
	for (size_t i = 0; i < v->nit; i++) {
		const struct item *x = &v->it[i];
		if (x->n <= n || !has_prefix(v, x, a, n))
			continue;
		const struct tok *t = &v->toks[x->first + n];
		if (want_one) {
			path[n] = *t;
			if (path_hash(path, n + 1) != only)
				continue;
		}
		kid_add(v, kid_of(v, &k, &nk, &ak, t), x, path, n);
	}
	int rc = 0;
	if (!(nk == 1 && is_no_line(&k[0].t) && !want_one))
		for (size_t j = 0; j < nk && !rc; j++)
			rc = kid_emit(v, &k[j], path, n, parent, fn, arg);
	if (want_one && !rc && nk == 1)
		rc = 1;
	v->nvals = mark; /* the kids' values are scratch */
	for (size_t j = 0; j < nk; j++)
		free(k[j].pv);
	free(k);
	free(path);
	return rc;
}

/* The path whose hash is h: *a (an item's tokens) and its length. */
static int path_find(struct fview *v, uint64_t h, const struct tok **a, size_t *n)
{
	for (size_t i = 0; i < v->nit; i++) {
		const struct item *x = &v->it[i];
		uint64_t p = CP_FNV1A_INIT;
		for (size_t k = 0; k < x->n; k++) {
			p = tok_hash(p, &v->toks[x->first + k]);
			if (p == h) {
				*a = v->toks + x->first;
				*n = k + 1;
				return 0;
			}
		}
	}
	return cp_error(CP_ENOENT, "no flat row %016llx", (unsigned long long)h);
}

/* ---- the groups: modules, files, procedures ------------------------------------------ */

struct grow {
	struct cp_web_ctx *c;
	struct cp_web_row *out; /* one, or fn for each */
	cp_web_row_fn fn;
	void *arg;
};

/* r from group g: 1, 0 when the request's selection has no such row, or a negative CP_E*. */
static int group_row(struct cp_web_ctx *c, const struct cp_dbq_group *g, struct cp_web_row *r)
{
	const struct cp_db *h = &c->m->head;
	memset(r, 0, sizeof *r);
	r->id = (struct cp_web_node){CP_WEB_FLAT, g->id, 0, 1, 0};
	r->has_parent = 1;
	r->parent = (struct cp_web_node){CP_WEB_FLAT, g->parent, 0, g->parent ? 1 : 0, 0};
	static const char *const kinds[] = {"module", "file", "procedure", "partial"};
	r->kind = "procedure";
	for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++)
		if (!strcmp(g->kind, kinds[k]))
			r->kind = kinds[k];
	const char *mod = g->module < h->nmodules ? h->modules[g->module].path : NULL;
	const char *file = g->file < h->nfiles ? h->files[g->file].path : NULL;
	r->module = mod ? xstrdup(mod) : NULL;
	r->file_id = g->file < h->nfiles ? g->file : CP_WEB_NONE;
	r->file = file && strcmp(g->kind, "module") ? xstrdup(file) : NULL;
	r->proc_id = CP_WEB_NONE;
	struct cp_dbq_frame f;
	if (!strcmp(g->kind, "module"))
		r->name = xstrdup(mod ? mod : "<unknown>");
	else if (!strcmp(g->kind, "file"))
		r->name = xstrdup(file ? file : "<no source>");
	else if (!strcmp(g->kind, "partial"))
		r->name = xstrdup("<partial call paths>");
	else if (!cp_dbq_bu_frame(c->m->q, g->key, &f) && f.proc < h->nprocs) {
		r->name = xstrdup(h->procs[f.proc].name);
		r->proc_id = f.proc;
		r->procedure = xstrdup(r->name);
	} else
		r->name = xstrdup("<unknown procedure>");
	r->has_children = g->has_children;
	memcpy(r->incl, g->incl, c->ms.ndb * sizeof(double));
	memcpy(r->excl, g->excl, c->ms.ndb * sizeof(double));
	if (cp_web_sel_lazy(c))
		return cp_web_sel_row(c, CP_DBQ_FLAT, g->id, r);
	cp_web_eval_db(c, r);
	return 1;
}

static int group_take(void *arg, const struct cp_dbq_group *g)
{
	struct grow *w = arg;
	struct cp_web_row r, *out = w->out ? w->out : &r;
	int rc = group_row(w->c, g, out);
	if (rc <= 0 || w->out) {
		if (rc <= 0)
			cp_web_row_release(out);
		return rc < 0 ? rc : rc ? 0 : w->out ? cp_error(CP_ENOENT, "no flat row") : 0;
	}
	rc = w->fn(w->arg, &r);
	cp_web_row_release(&r);
	return rc;
}

static int row_take(void *arg, struct cp_web_row *r)
{
	struct cp_web_row *out = arg;
	*out = *r;
	r->name = r->module = r->file = r->procedure = NULL;
	return 0;
}

struct ginfo {
	uint32_t key;
	int proc;
};

static int group_info(void *arg, const struct cp_dbq_group *g)
{
	struct ginfo *i = arg;
	i->key = g->key;
	i->proc = !strcmp(g->kind, "procedure");
	return 0;
}

/* The rows below path a[0..n) of procedure key, or only the one with hash `only`. */
static int below(struct cp_web_ctx *c, uint32_t key, const struct tok *a, size_t n,
		 const struct cp_web_node *parent, cp_web_row_fn fn, void *arg, int want_one,
		 uint64_t only, struct fview *v)
{
	struct tok *copy = xcalloc(n + 1, sizeof *copy);
	if (n) /* a is NULL at a procedure's own level */
		memcpy(copy, a, n * sizeof *copy);
	int rc = path_kids(v, copy, n, parent, fn, arg, want_one, only);
	free(copy);
	(void)c;
	(void)key;
	return rc;
}

int cp_web_flat_node(struct cp_web_ctx *c, const struct cp_web_node *id, struct cp_web_row *out)
{
	struct grow w = {c, out, NULL, NULL};
	if (id->level == 1)
		return cp_dbq_flat_groups(c->m->q, id->index, CP_DB_NONE, CP_DB_NONE, group_take,
					  &w);
	struct fview *v = NULL;
	const struct tok *a = NULL;
	size_t n = 0;
	int rc = fview_get(c, id->index, NULL, &v);
	if (!rc)
		rc = path_find(v, id->hash, &a, &n);
	struct cp_web_node parent = {CP_WEB_FLAT, id->index, 0, 2, 0};
	if (!rc && n == 1) { /* below the procedure's group */
		struct cp_web_row g;
		struct grow one = {c, &g, NULL, NULL};
		rc = cp_dbq_flat_groups(c->m->q, CP_DB_NONE, CP_DB_NONE, id->index, group_take,
					&one);
		if (!rc) {
			parent = g.id;
			cp_web_row_release(&g);
		}
	} else if (!rc) {
		parent.hash = path_hash(a, n - 1);
	}
	if (!rc) {
		rc = below(c, id->index, a, n - 1, &parent, row_take, out, 1, id->hash, v);
		rc = rc == 1 ? 0 : rc ? rc : cp_error(CP_ENOENT, "no flat row");
	}
	return rc;
}

int cp_web_flat_children(struct cp_web_ctx *c, const struct cp_web_node *id, cp_web_row_fn fn,
			 void *arg)
{
	struct grow w = {c, NULL, fn, arg};
	if (!id->level && (id->index || id->noline))
		return cp_error(CP_ENOENT, "no node f%u", id->index);
	if (!id->level)
		return cp_dbq_flat_groups(c->m->q, CP_DB_NONE, 0, CP_DB_NONE, group_take, &w);
	uint32_t key = id->index;
	if (id->level == 1) {
		struct ginfo g = {0, 0};
		int rc =
		    cp_dbq_flat_groups(c->m->q, id->index, CP_DB_NONE, CP_DB_NONE, group_info, &g);
		if (rc || !g.proc)
			return rc ? rc
				  : cp_dbq_flat_groups(c->m->q, CP_DB_NONE, id->index, CP_DB_NONE,
						       group_take, &w);
		key = g.key;
	}
	struct fview *v = NULL;
	const struct tok *a = NULL;
	size_t n = 0;
	int rc = fview_get(c, key, NULL, &v);
	if (!rc && id->level == 2)
		rc = path_find(v, id->hash, &a, &n);
	if (!rc)
		rc = below(c, key, a, n, id, fn, arg, 0, 0, v);
	return rc;
}

/* ---- per-thread values of a row below a procedure (/api/threads) --------------------- */

int cp_web_flat_threads(struct cp_web_ctx *c, const struct cp_web_node *id, double *incl,
			double *excl)
{
	struct fview *v = NULL;
	const struct tok *a = NULL;
	size_t n = 0;
	struct fsel all = {-1, -1, 1}; /* every thread's rows, each profile's values */
	int rc = fview_get(c, id->index, &all, &v);
	if (!rc)
		rc = path_find(v, id->hash, &a, &n);
	if (rc)
		return rc;
	struct tok *path = xcalloc(n + 1, sizeof *path);
	memcpy(path, a, n * sizeof *path); /* a points into v->toks */
	for (size_t i = 0; i < v->nit; i++) {
		const struct item *x = &v->it[i];
		int cov = has_prefix(v, x, path, n) ? covered(v, x, path, n) : -1;
		const double *pv = v->ipv + i * v->npv;
		for (size_t j = 0; cov >= 0 && j < v->npv; j++) {
			incl[j] += cov ? 0 : pv[j];
			excl[j] += x->call ? 0 : pv[j];
		}
	}
	free(path);
	return rc;
}
