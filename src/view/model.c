/* The top-down view read lazily from the database file (db/query.h), and the dispatch to the
 * in-memory profile (model-full.c) for everything else. */
#include "view/model.h"

#include "base/error.h"
#include "base/xalloc.h"
#include "db/expr.h"
#include "db/query.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct lookup {
	const char *const *names;
	size_t n;
};

static uint32_t lookup_name(void *ctx, const char *name, size_t len)
{
	const struct lookup *l = ctx;
	for (size_t i = 0; i < l->n; i++)
		if (l->names[i] && strlen(l->names[i]) == len && !memcmp(l->names[i], name, len))
			return (uint32_t)i;
	return UINT32_MAX;
}

static void formulas_free(struct cp_web_model *m)
{
	for (size_t i = 0; m->formulas && i < m->head.nmetrics; i++)
		cp_expr_free(m->formulas[i]);
	free(m->formulas);
	m->formulas = NULL;
}

static int formulas_build(struct cp_web_model *m)
{
	const char *names[CP_DB_MAX_METRICS * 2];
	size_t n = m->head.nmetrics < CP_DB_MAX_METRICS * 2 ? m->head.nmetrics : CP_DB_MAX_METRICS;
	for (size_t i = 0; i < n; i++)
		names[i] = m->head.metrics[i].name;
	struct lookup l = {names, n};
	m->formulas = xcalloc(m->head.nmetrics + 1, sizeof *m->formulas);
	for (size_t i = 0; i < m->head.nmetrics; i++) {
		const struct cp_db_metric *dm = &m->head.metrics[i];
		if (dm->kind == CP_DB_METRIC_DERIVED && dm->formula &&
		    cp_expr_parse(dm->formula, lookup_name, &l, &m->formulas[i]))
			return CP_EFORMAT;
	}
	return 0;
}

int cp_web_model_open(struct cp_web_model *m, const char *dbpath, const char *name)
{
	memset(m, 0, sizeof *m);
	m->path = xstrdup(dbpath);
	m->name = xstrdup(name);
	int rc = cp_dbq_open(dbpath, &m->head, &m->q);
	if (!rc && m->head.nmetrics > CP_DB_MAX_METRICS)
		rc = cp_error(CP_EFORMAT, "%s: more than %d metrics", dbpath, CP_DB_MAX_METRICS);
	if (!rc)
		rc = formulas_build(m);
	return rc;
}

void cp_web_model_release(struct cp_web_model *m)
{
	formulas_free(m);
	cp_dbq_close(m->q);
	cp_db_release(&m->head);
	cp_web_full_free(m->full);
	cp_web_flat_release(m);
	free(m->path);
	free(m->name);
	memset(m, 0, sizeof *m);
}

int cp_web_model_reopen(struct cp_web_model *m, const char *dbpath)
{
	/* the handle points into the model (its head): open in place, after a trial */
	struct cp_web_model trial;
	int rc = cp_web_model_open(&trial, dbpath, m->name);
	cp_web_model_release(&trial);
	if (rc)
		return rc;
	uint64_t generation = m->generation + 1;
	struct cp_web_async *async = m->async;
	char *name = xstrdup(m->name);
	cp_web_model_release(m);
	rc = cp_web_model_open(m, dbpath, name);
	m->generation = generation;
	m->async = async;
	free(name);
	return rc;
}

int cp_web_ctx_init(struct cp_web_ctx *c, struct cp_web_model *m, const struct cp_web_req *req,
		    char *err, size_t errlen)
{
	memset(c, 0, sizeof *c);
	c->m = m;
	c->req = req;
	struct cp_web_mset *ms = &c->ms;
	ms->ndb = m->head.nmetrics;
	for (size_t i = 0; i < ms->ndb; i++)
		ms->names[i] = m->head.metrics[i].name;
	ms->n = ms->ndb;
	for (size_t d = 0; d < req->nderived; d++) {
		const char *spec = req->derived[d], *eq = strchr(spec, '=');
		char name[128];
		size_t nl = (size_t)(eq - spec);
		while (nl && spec[nl - 1] == ' ')
			nl--;
		while (nl && *spec == ' ')
			spec++, nl--;
		struct lookup l = {ms->names, ms->n};
		if (!nl || nl >= sizeof name) {
			snprintf(err, errlen, "derived metric '%s': NAME=FORMULA expected",
				 req->derived[d]);
			return -1;
		}
		memcpy(name, spec, nl);
		name[nl] = 0;
		if (lookup_name(&l, name, nl) != UINT32_MAX) {
			snprintf(err, errlen, "derived metric '%s': the name is taken", name);
			return -1;
		}
		if (cp_expr_parse(eq + 1, lookup_name, &l, &ms->exprs[ms->n])) {
			snprintf(err, errlen, "%s", cp_error_message());
			return -1;
		}
		ms->names[ms->n++] = c->req->derived[d]; /* "NAME=FORMULA": cut at '=' on output */
	}
	return 0;
}

void cp_web_ctx_release(struct cp_web_ctx *c)
{
	for (size_t i = c->ms.ndb; i < c->ms.n; i++)
		cp_expr_free(c->ms.exprs[i]);
	memset(c, 0, sizeof *c);
}

void cp_web_row_release(struct cp_web_row *r)
{
	free(r->name);
	free(r->module);
	free(r->file);
	free(r->procedure);
	r->name = r->module = r->file = r->procedure = NULL;
}

void cp_web_eval(const struct cp_web_ctx *c, struct cp_web_row *r)
{
	for (size_t i = c->ms.ndb; i < c->ms.n; i++) {
		r->incl[i] = cp_expr_eval(c->ms.exprs[i], r->incl);
		r->excl[i] = cp_expr_eval(c->ms.exprs[i], r->excl);
	}
}

int cp_web_needs_full(const struct cp_web_req *req)
{
	return req->view != CP_WEB_TD || req->stat != CP_DB_STAT_SUM || req->thread >= 0 ||
	       req->rank >= 0;
}

/* ---- the lazy top-down view --------------------------------------------------------- */

static char *base_name(const char *path)
{
	const char *b = path ? strrchr(path, '/') : NULL;
	return xstrdup(b ? b + 1 : path ? path : "<unknown file>");
}

char *cp_web_scope_name(const struct cp_db *h, const struct cp_db_scope *s)
{
	char buf[700];
	const char *file = s->file < h->nfiles ? h->files[s->file].path : NULL;
	char *base = base_name(file);
	switch (s->kind) {
	case CP_DBK_ROOT:
		snprintf(buf, sizeof buf, "<total>");
		break;
	case CP_DBK_PROC:
	case CP_DBK_INLINE:
		snprintf(buf, sizeof buf, "%s",
			 s->proc < h->nprocs ? h->procs[s->proc].name : "<unknown procedure>");
		break;
	case CP_DBK_LOOP: {
		unsigned lo = s->line_lo ? s->line_lo : s->line, hi = s->line_hi;
		if (!file && !lo)
			snprintf(buf, sizeof buf, "loop at [%s+0x%llx]",
				 s->module < h->nmodules ? h->modules[s->module].name : "?",
				 (unsigned long long)s->addr);
		else if (lo && hi > lo)
			snprintf(buf, sizeof buf, "loop at %s:%u-%u", base, lo, hi);
		else if (lo)
			snprintf(buf, sizeof buf, "loop at %s:%u", base, lo);
		else
			snprintf(buf, sizeof buf, "loop at %s", base);
		break;
	}
	case CP_DBK_STMT:
		if (s->line)
			snprintf(buf, sizeof buf, "%s:%u", base, s->line);
		else
			snprintf(buf, sizeof buf, "%s", base);
		break;
	default:
		snprintf(buf, sizeof buf, "<partial call paths>");
	}
	free(base);
	return xstrdup(buf);
}

static const char *const kind_names[] = {"root", "procedure", "inlined", "loop", "line", "partial"};

/* Fills r from a database row (values: sums). */
static void row_from_scope(const struct cp_web_ctx *c, const struct cp_dbq_row *d,
			   struct cp_web_row *r)
{
	const struct cp_db *h = &c->m->head;
	const struct cp_db_scope *s = &d->s;
	memset(r, 0, sizeof *r);
	r->id = (struct cp_web_node){CP_WEB_TD, d->id, 0, 0, 0};
	r->has_parent = d->id != 0;
	r->parent =
	    (struct cp_web_node){CP_WEB_TD, s->parent == CP_DB_NONE ? 0 : s->parent, 0, 0, 0};
	r->kind = kind_names[s->kind <= CP_DBK_PARTIAL ? s->kind : CP_DBK_STMT];
	r->name = cp_web_scope_name(h, s);
	int partial = s->kind == CP_DBK_PARTIAL || s->kind == CP_DBK_ROOT;
	r->module =
	    !partial && s->module < h->nmodules ? xstrdup(h->modules[s->module].path) : NULL;
	r->file_id = !partial && s->file < h->nfiles ? s->file : CP_WEB_NONE;
	r->file = r->file_id != CP_WEB_NONE ? xstrdup(h->files[s->file].path) : NULL;
	r->line = partial ? 0 : (int)(s->kind == CP_DBK_LOOP && s->line_lo ? s->line_lo : s->line);
	r->line_end = s->kind == CP_DBK_LOOP ? (int)s->line_hi : 0;
	r->proc_id = !partial && s->proc < h->nprocs ? s->proc : CP_WEB_NONE;
	r->procedure = r->proc_id != CP_WEB_NONE ? xstrdup(h->procs[s->proc].name) : NULL;
	r->has_children = d->has_children;
	if (cp_web_td_stat(c)) { /* the database's statistics over threads */
		for (size_t i = 0; i < c->ms.ndb; i++) {
			r->incl[i] = cp_db_stat_value(&d->stats[i * 2 + 1], c->req->stat);
			r->excl[i] = cp_db_stat_value(&d->stats[i * 2], c->req->stat);
		}
		cp_web_eval(c, r);
		return;
	}
	if (cp_web_td_select(c)) { /* one thread's or rank's: raw values, then the formulas */
		if (cp_web_select_values(c, d->id, r->incl, r->excl))
			for (size_t i = 0; i < c->ms.ndb; i++)
				r->incl[i] = r->excl[i] = NAN;
		cp_web_eval_db(c, r);
		return;
	}
	for (size_t i = 0; i < c->ms.ndb; i++) {
		r->incl[i] = d->stats[i * 2 + 1].sum;
		r->excl[i] = d->stats[i * 2].sum;
	}
	cp_web_eval(c, r);
}

struct one {
	const struct cp_web_ctx *c;
	struct cp_web_row *out;
};

static int take_one(void *arg, const struct cp_dbq_row *d)
{
	struct one *o = arg;
	row_from_scope(o->c, d, o->out);
	return 0;
}

/* Values of the <no line> leaf of a scope: its inclusive value minus its children's. */
struct own {
	const struct cp_web_ctx *c;
	double sum[CP_DB_MAX_METRICS];
	double *pin; /* a statistic: the children's inclusive values per profile (np * nraw) */
	size_t nchildren;
	cp_web_row_fn fn;
	void *arg;
	int rc;
};

static int own_child(void *arg, const struct cp_dbq_row *d)
{
	struct own *o = arg;
	struct cp_web_row r;
	int sel = cp_web_td_select(o->c);
	if (sel || o->fn)
		row_from_scope(o->c, d, &r);
	for (size_t i = 0; i < o->c->ms.ndb && i < CP_DB_MAX_METRICS; i++) {
		double v = sel ? r.incl[i] : d->stats[i * 2 + 1].sum;
		if (!isnan(v))
			o->sum[i] += v;
	}
	o->nchildren++;
	if (o->pin && !o->rc)
		o->rc = cp_dbq_threads_add(o->c->m->q, CP_DBQ_SCOPE, d->id, o->pin, NULL);
	if (!o->fn) {
		if (sel)
			cp_web_row_release(&r);
		return 0;
	}
	o->rc = o->fn(o->arg, &r);
	cp_web_row_release(&r);
	return o->rc;
}

/* With a statistic: room for the children's values per profile (else NULL). */
static double *own_pin(const struct cp_web_ctx *c)
{
	size_t n = c->m->head.nprofiles * cp_db_nraw(&c->m->head);
	return cp_web_td_stat(c) ? xcalloc(n + 1, sizeof(double)) : NULL;
}

/* Fills leaf with the <no line> leaf of parent (a row); 1 when it has a cost. */
static int own_leaf(const struct cp_web_ctx *c, const struct cp_web_row *parent,
		    const struct own *o, struct cp_web_row *leaf)
{
	const struct cp_db *h = &c->m->head;
	memset(leaf, 0, sizeof *leaf);
	int any = 0;
	double psum[CP_DB_MAX_METRICS], st[CP_DB_MAX_METRICS];
	if (o->pin && cp_web_own_stat(c, parent->id.index, o->pin, st, psum))
		return 0;
	for (size_t i = 0; i < c->ms.ndb; i++) {
		if (h->metrics[i].kind != CP_DB_METRIC_RAW)
			continue;
		double in = o->pin ? psum[i] : parent->incl[i], v = in - o->sum[i];
		if (!(fabs(v) > 1e-9 * fabs(in)))
			v = 0;
		any |= v != 0;
		leaf->incl[i] = leaf->excl[i] = o->pin ? st[i] : v;
	}
	if (!o->nchildren || !any)
		return 0;
	for (size_t i = 0; i < c->ms.ndb; i++)
		if (c->m->formulas[i])
			leaf->incl[i] = leaf->excl[i] = cp_expr_eval(c->m->formulas[i], leaf->incl);
	cp_web_eval(c, leaf);
	leaf->id = (struct cp_web_node){CP_WEB_TD, parent->id.index, 1, 0, 0};
	leaf->parent = parent->id;
	leaf->has_parent = 1;
	leaf->kind = "line";
	leaf->name = xstrdup("<no line>");
	leaf->module = parent->module ? xstrdup(parent->module) : NULL;
	leaf->file_id = leaf->proc_id = CP_WEB_NONE;
	leaf->proc_id = parent->proc_id;
	leaf->procedure = parent->procedure ? xstrdup(parent->procedure) : NULL;
	return 1;
}

static int lazy_node(struct cp_web_ctx *c, const struct cp_web_node *id, struct cp_web_row *out)
{
	struct cp_web_row scope;
	struct one o = {c, id->noline ? &scope : out};
	int rc = cp_dbq_scope(c->m->q, id->index, take_one, &o);
	if (rc || !id->noline)
		return rc;
	struct own w = {.c = c, .pin = own_pin(c)};
	rc = cp_dbq_children(c->m->q, id->index, own_child, &w);
	if (!rc && !w.rc && !own_leaf(c, &scope, &w, out))
		rc = cp_error(CP_ENOENT, "no node %u.n", id->index);
	free(w.pin);
	rc = rc ? rc : w.rc;
	cp_web_row_release(&scope);
	return rc;
}

static int lazy_children(struct cp_web_ctx *c, const struct cp_web_node *id, cp_web_row_fn fn,
			 void *arg)
{
	if (id->noline)
		return 0;
	struct cp_web_row parent;
	int rc = lazy_node(c, id, &parent);
	if (rc)
		return rc;
	struct own w = {.c = c, .pin = own_pin(c), .fn = fn, .arg = arg};
	rc = cp_dbq_children(c->m->q, id->index, own_child, &w);
	struct cp_web_row leaf;
	if (!rc && !w.rc && own_leaf(c, &parent, &w, &leaf)) {
		rc = fn(arg, &leaf);
		cp_web_row_release(&leaf);
	}
	free(w.pin);
	cp_web_row_release(&parent);
	return rc ? rc : w.rc;
}

int cp_web_node_get(struct cp_web_ctx *c, const struct cp_web_node *id, struct cp_web_row *out)
{
	memset(out, 0, sizeof *out);
	int rc = cp_web_select_check(c);
	if (rc)
		return rc;
	if (cp_web_bu_lazy(c) && id->level)
		return cp_web_bu_node(c, id, out);
	if (cp_web_flat_lazy(c) && id->level)
		return cp_web_flat_node(c, id, out);
	if (cp_web_bu_lazy(c) || cp_web_flat_lazy(c)) { /* the root: the top-down root's values */
		struct cp_web_node root = {CP_WEB_TD, 0, 0, 0, 0};
		if (id->index || id->noline)
			return cp_error(CP_ENOENT, "no node %s%u",
					c->req->view == CP_WEB_BU ? "b" : "f", id->index);
		rc = lazy_node(c, &root, out);
		if (!rc && cp_web_sel_lazy(c)) /* a selection's or a statistic's total */
			rc = cp_web_sel_row(c, CP_DBQ_SCOPE, 0, out);
		out->id.view = out->parent.view = c->req->view;
		out->has_children = 1;
		return rc < 0 ? rc : 0;
	}
	if (cp_web_needs_full(c->req) && !cp_web_td_select(c) && !cp_web_td_stat(c))
		return cp_web_full_node(c, id, out);
	return lazy_node(c, id, out);
}

int cp_web_children(struct cp_web_ctx *c, const struct cp_web_node *id, cp_web_row_fn fn, void *arg)
{
	int rc = cp_web_select_check(c);
	if (rc)
		return rc;
	if (cp_web_bu_lazy(c))
		return cp_web_bu_children(c, id, fn, arg);
	if (cp_web_flat_lazy(c))
		return cp_web_flat_children(c, id, fn, arg);
	if (cp_web_needs_full(c->req) && !cp_web_td_select(c) && !cp_web_td_stat(c))
		return cp_web_full_children(c, id, fn, arg);
	return lazy_children(c, id, fn, arg);
}

#define TOP_MIN_CHILDREN 1000

struct page {
	const struct cp_web_ctx *c;
	cp_web_row_fn fn;
	void *arg;
	int rc;
};

static int page_row(void *arg, const struct cp_dbq_row *d)
{
	struct page *p = arg;
	struct cp_web_row r;
	row_from_scope(p->c, d, &r);
	p->rc = p->fn(p->arg, &r);
	cp_web_row_release(&r);
	return p->rc;
}

int cp_web_children_top(struct cp_web_ctx *c, const struct cp_web_node *id, size_t want, double cut,
			cp_web_row_fn fn, void *arg, size_t *total)
{
	const struct cp_web_req *r = c->req;
	if (cp_web_needs_full(r) || id->noline || r->sort == CP_WEB_SORT_NAME ||
	    r->sort_metric >= c->ms.ndb)
		return 0;
	struct own w = {.c = c};
	int rc = cp_dbq_children_sums(c->m->q, id->index, &w.nchildren, w.sum);
	if (rc || w.nchildren < TOP_MIN_CHILDREN)
		return rc;
	struct cp_web_row parent, leaf;
	if ((rc = lazy_node(c, id, &parent)))
		return rc;
	struct page p = {c, fn, arg, 0};
	rc = cp_dbq_children_page(c->m->q, id->index, r->sort_metric, r->sort == CP_WEB_SORT_EXCL,
				  cut, 0, want, page_row, &p);
	*total = w.nchildren;
	if (!rc && !p.rc && own_leaf(c, &parent, &w, &leaf)) {
		(*total)++;
		rc = fn(arg, &leaf);
		cp_web_row_release(&leaf);
	}
	cp_web_row_release(&parent);
	rc = rc ? rc : p.rc;
	return rc ? rc : 1;
}
