/* Per-thread values of a row (/api/threads) read from the database's per-thread tables
 * (db/query.h, docs/format.md "The per-thread tables"), without the whole profile in
 * memory: a top-down scope's from its scope_thread row, a bottom-up node's from the rows of
 * its procedure's frames (model-bu.c), a flat module, file or procedure row's from its
 * flat_thread row, a flat row below a procedure's from the rows of the scopes that make it
 * (model-flat.c). */
#include "view/model.h"

#include "base/error.h"
#include "base/xalloc.h"
#include "db/query.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int no_row(void *ctx, const struct cp_dbq_row *row)
{
	(void)ctx;
	(void)row;
	return 0;
}

static int no_group(void *ctx, const struct cp_dbq_group *g)
{
	(void)ctx;
	(void)g;
	return 0;
}

/* 1 when answered, 0 when the whole profile is needed, or a negative CP_E*. */
static int answered(int rc)
{
	return rc ? rc : 1;
}

int cp_web_threads_lazy(struct cp_web_ctx *c, const struct cp_web_node *id, double *incl,
			double *excl)
{
	struct cp_dbq *q = c->m->q;
	if (!cp_dbq_has_threads(q, CP_DBQ_SCOPE) || id->noline)
		return 0;
	if (id->view == CP_WEB_TD && !id->level) {
		int rc = cp_dbq_scope(q, id->index, no_row, NULL);
		return answered(rc ? rc
				   : cp_dbq_threads_add(q, CP_DBQ_SCOPE, id->index, incl, excl));
	}
	if (!id->level && !id->index) /* the root of the bottom-up or flat view: the total */
		return answered(cp_dbq_threads_add(q, CP_DBQ_SCOPE, 0, incl, NULL));
	if (id->view == CP_WEB_BU && id->level && cp_dbq_has_bu(q))
		return answered(cp_web_bu_threads(c, id, incl, excl));
	if (id->view == CP_WEB_FLAT && id->level == 1 && cp_dbq_has_threads(q, CP_DBQ_FLAT)) {
		int rc = cp_dbq_flat_groups(q, id->index, CP_DB_NONE, CP_DB_NONE, no_group, NULL);
		return answered(rc ? rc
				   : cp_dbq_threads_add(q, CP_DBQ_FLAT, id->index, incl, excl));
	}
	if (id->view == CP_WEB_FLAT && id->level == 2 && cp_dbq_has_flat(q))
		return answered(cp_web_flat_threads(c, id, incl, excl));
	return 0;
}

/* ---- the top-down view of one thread or rank ------------------------------------------ */

int cp_web_td_select(const struct cp_web_ctx *c)
{
	const struct cp_web_req *r = c->req;
	return r->view == CP_WEB_TD && r->stat == CP_DB_STAT_SUM &&
	       (r->thread >= 0 || r->rank >= 0) && cp_dbq_has_threads(c->m->q, CP_DBQ_SCOPE);
}

static int selected(const struct cp_web_ctx *c, uint32_t p)
{
	const struct cp_web_req *r = c->req;
	return r->thread >= 0 ? p == r->thread : c->m->head.profiles[p].rank == r->rank;
}

int cp_web_select_check(const struct cp_web_ctx *c)
{
	const struct cp_db *h = &c->m->head;
	const struct cp_web_req *r = c->req;
	if ((r->thread < 0 && r->rank < 0) || !cp_dbq_has_threads(c->m->q, CP_DBQ_SCOPE))
		return 0;
	for (uint32_t p = 0; p < h->nprofiles; p++)
		if (selected(c, p))
			return 0;
	if (r->thread >= 0)
		return cp_error(CP_ENOENT, "no thread (profile) %lld", (long long)r->thread);
	return cp_error(CP_ENOENT, "no MPI rank %lld", (long long)r->rank);
}

int cp_web_select_values(const struct cp_web_ctx *c, uint32_t id, double *incl, double *excl)
{
	const struct cp_db *h = &c->m->head;
	size_t nraw = cp_db_nraw(h), np = h->nprofiles;
	double *in = xcalloc(np * nraw + 1, sizeof *in), *ex = xcalloc(np * nraw + 1, sizeof *ex);
	int rc = cp_dbq_threads_add(c->m->q, CP_DBQ_SCOPE, id, in, ex);
	memset(incl, 0, nraw * sizeof *incl);
	memset(excl, 0, nraw * sizeof *excl);
	for (uint32_t p = 0; p < np && !rc; p++)
		for (size_t m = 0; m < nraw && selected(c, p); m++) {
			incl[m] += in[p * nraw + m];
			excl[m] += ex[p * nraw + m];
		}
	free(in);
	free(ex);
	return rc;
}

/* The request's statistic of metric m over the profiles' values x (np * nraw, profile-major):
 * the sum of the selected profiles' (all without a selection), or a statistic over the
 * profiles with a value, as the database's statistics (and report's) take it. */
static double reduce(const struct cp_web_ctx *c, const double *x, size_t m)
{
	const struct cp_db *h = &c->m->head;
	size_t nraw = cp_db_nraw(h);
	struct cp_db_stat a = {0, 0, 0, 0, 0, CP_DB_NONE, 0};
	double sq = 0;
	int sel = c->req->thread >= 0 || c->req->rank >= 0;
	for (uint32_t p = 0; p < h->nprofiles; p++) {
		double v = x[p * nraw + m];
		if (v == 0 || isnan(v) || (sel && !selected(c, p)))
			continue;
		a.min = a.count && a.min < v ? a.min : v;
		a.max = a.count && a.max > v ? a.max : v;
		a.count++;
		a.sum += v;
		sq += v * v;
	}
	a.mean = a.count ? a.sum / a.count : 0;
	double var = a.count ? sq / a.count - a.mean * a.mean : 0;
	a.stddev = var > 0 ? sqrt(var) : 0;
	return cp_db_stat_value(&a, c->req->stat);
}

int cp_web_sel_lazy(const struct cp_web_ctx *c)
{
	const struct cp_web_req *r = c->req;
	return (r->thread >= 0 || r->rank >= 0 || r->stat != CP_DB_STAT_SUM) &&
	       cp_dbq_has_threads(c->m->q, CP_DBQ_SCOPE) &&
	       cp_dbq_has_threads(c->m->q, CP_DBQ_FLAT);
}

int cp_web_sel_reduce(const struct cp_web_ctx *c, const double *incl, const double *excl,
		      struct cp_web_row *r)
{
	const struct cp_web_req *q = c->req;
	size_t nraw = cp_db_nraw(&c->m->head);
	int any = 0;
	for (size_t m = 0; m < nraw; m++) {
		r->incl[m] = incl ? reduce(c, incl, m) : 0;
		r->excl[m] = excl ? reduce(c, excl, m) : 0;
		any |= r->incl[m] != 0 || r->excl[m] != 0;
	}
	cp_web_eval_db(c, r);
	return any || (q->thread < 0 && q->rank < 0);
}

int cp_web_sel_row(const struct cp_web_ctx *c, int table, uint32_t id, struct cp_web_row *r)
{
	const struct cp_db *h = &c->m->head;
	size_t n = h->nprofiles * cp_db_nraw(h);
	double *in = xcalloc(2 * n + 1, sizeof *in);
	int rc = cp_dbq_threads_add(c->m->q, table, id, in, in + n);
	int keep = !rc && cp_web_sel_reduce(c, in, table == CP_DBQ_SCOPE && !id ? NULL : in + n, r);
	free(in);
	return rc ? rc : keep;
}

/* ---- the top-down view of a statistic over threads ------------------------------------- */

int cp_web_td_stat(const struct cp_web_ctx *c)
{
	const struct cp_web_req *r = c->req;
	return r->view == CP_WEB_TD && r->stat != CP_DB_STAT_SUM && r->thread < 0 && r->rank < 0 &&
	       cp_dbq_has_threads(c->m->q, CP_DBQ_SCOPE);
}

int cp_web_own_stat(const struct cp_web_ctx *c, uint32_t id, const double *kids, double *st,
		    double *psum)
{
	const struct cp_db *h = &c->m->head;
	size_t nraw = cp_db_nraw(h), np = h->nprofiles;
	double *in = xcalloc(np * nraw + 1, sizeof *in);
	int rc = cp_dbq_threads_add(c->m->q, CP_DBQ_SCOPE, id, in, NULL);
	for (size_t m = 0; m < nraw && !rc; m++) {
		psum[m] = 0;
		for (uint32_t p = 0; p < np; p++) {
			double *x = &in[p * nraw + m], v = *x - kids[p * nraw + m];
			psum[m] += *x;
			*x = fabs(v) > 1e-9 * fabs(*x) ? v : 0; /* its own value */
		}
	}
	for (size_t m = 0; m < nraw && !rc; m++)
		st[m] = reduce(c, in, m);
	free(in);
	return rc;
}
