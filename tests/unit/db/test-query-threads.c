/* The per-thread tables of a database file (db-sqlite-threads.c, read by db/query.h): each
 * scope's values in every profile equal that profile's own values (its exclusive values
 * summed over the scope's subtree, and the scope's own code), and add up to the statistics
 * of the `value` table; the flat rows' add up to `flat_value`. Written in one range and in
 * many (a tiny budget), with few profiles (raw blobs) and many (compressed blobs). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "base/xalloc.h"
#include "db-build.h"
#include "db/db-sqlite-bu.h"
#include "db/db.h"
#include "db/query.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct fixture {
	char path[64];
	struct cp_db whole, head;
	struct cp_dbq *q;
	struct test_db_ids ids;
};

/* The test database with `extra` more worker profiles, each with its own value at the
 * worker's statement, written with the given budget. */
static void open_db(struct fixture *f, size_t extra, size_t budget, const char *tag)
{
	struct cp_db db;
	test_db_build(&db, &f->ids);
	struct cp_db_profile pr = {.pid = 100, .rank = -1, .host = "node1"};
	for (size_t i = 0; i < extra; i++) {
		pr.tid = 200 + (int)i;
		pr.tidx = 3 + (uint32_t)i;
		uint32_t p = cp_db_profile_add(&db, &pr);
		cp_db_add(&db, p, f->ids.sstmt, f->ids.cputime, 1000.5 + (double)i * 7);
		cp_db_add(&db, p, f->ids.smstmt, f->ids.cycles, 3 + (double)i);
	}
	cp_db_threads_budget = budget;
	assert_int_equal(
	    test_db_write_open(&db, tag, f->path, sizeof f->path, &f->whole, &f->head, &f->q), 0);
	cp_db_threads_budget = (size_t)1 << 23;
}

/* Profile p's inclusive and exclusive values of scope s, from its own values. */
static void expect_of(const struct cp_db *db, uint32_t p, uint32_t s, size_t m, double *in,
		      double *ex)
{
	*in = *ex = 0;
	const struct cp_db_pvalues *pv = &db->pvalues[p];
	for (size_t k = 0; k < pv->n; k++) {
		if (pv->v[k].metric != m)
			continue;
		int own = 1, below = 0;
		for (uint32_t a = pv->v[k].scope; a != CP_DB_NONE; a = db->scopes[a].parent) {
			if (a == s) {
				below = 1;
				break;
			}
			if (db->scopes[a].kind == CP_DBK_PROC)
				own = 0;
		}
		*in += below ? pv->v[k].value : 0;
		*ex += below && own ? pv->v[k].value : 0;
	}
}

static void check_scopes(struct fixture *f)
{
	const struct cp_db *w = &f->whole;
	size_t nraw = cp_db_nraw(w), np = w->nprofiles;
	assert_true(cp_dbq_has_threads(f->q, CP_DBQ_SCOPE));
	double *in = xcalloc(np * nraw, sizeof *in), *ex = xcalloc(np * nraw, sizeof *ex);
	for (uint32_t s = 0; s < w->nscopes; s++) {
		memset(in, 0, np * nraw * sizeof *in);
		memset(ex, 0, np * nraw * sizeof *ex);
		assert_int_equal(cp_dbq_threads_add(f->q, CP_DBQ_SCOPE, s, in, ex), 0);
		for (size_t m = 0; m < nraw; m++) {
			double si = 0, se = 0, mx = 0;
			for (uint32_t p = 0; p < np; p++) {
				double wi, we;
				expect_of(w, p, s, m, &wi, &we);
				assert_true(fabs(in[p * nraw + m] - wi) <= 1e-9 * fabs(wi));
				assert_true(fabs(ex[p * nraw + m] - we) <= 1e-9 * fabs(we));
				si += in[p * nraw + m];
				se += ex[p * nraw + m];
				mx = fmax(mx, in[p * nraw + m]);
			}
			const struct cp_db_stat *st = cp_db_stat_get(w, s, (uint32_t)m, 1);
			assert_true(fabs(si - st->sum) <= 1e-9 * fabs(st->sum));
			assert_true(mx == st->max);
			assert_true(fabs(se - cp_db_stat_get(w, s, (uint32_t)m, 0)->sum) <=
				    1e-9 * fabs(se));
		}
	}
	/* an exclusive-only add, and a scope without values adds nothing */
	memset(ex, 0, np * nraw * sizeof *ex);
	assert_int_equal(cp_dbq_threads_add(f->q, CP_DBQ_SCOPE, f->ids.swork, NULL, ex), 0);
	assert_true(ex[1 * nraw + f->ids.cputime] == 30);
	assert_int_equal(cp_dbq_threads_add(f->q, CP_DBQ_SCOPE, 999999, in, ex), 0);
	free(in);
	free(ex);
}

struct groups {
	uint32_t id[64];
	double incl[64], excl[64];
	size_t n;
};

static int take_group(void *ctx, const struct cp_dbq_group *g)
{
	struct groups *gs = ctx;
	assert_true(gs->n < 64);
	gs->id[gs->n] = g->id;
	gs->incl[gs->n] = g->incl[0];
	gs->excl[gs->n++] = g->excl[0];
	return 0;
}

static void check_flat(struct fixture *f)
{
	size_t nraw = cp_db_nraw(&f->whole), np = f->whole.nprofiles;
	struct groups gs = {.n = 0};
	assert_true(cp_dbq_has_threads(f->q, CP_DBQ_FLAT));
	assert_int_equal(cp_dbq_flat_groups(f->q, CP_DB_NONE, 0, CP_DB_NONE, take_group, &gs), 0);
	for (size_t i = 0; i < gs.n && gs.n < 60; i++) /* breadth first: every row */
		cp_dbq_flat_groups(f->q, CP_DB_NONE, gs.id[i], CP_DB_NONE, take_group, &gs);
	assert_true(gs.n >= 4); /* module, file(s), main, work */
	double *in = xcalloc(np * nraw, sizeof *in), *ex = xcalloc(np * nraw, sizeof *ex);
	for (size_t i = 0; i < gs.n; i++) {
		memset(in, 0, np * nraw * sizeof *in);
		memset(ex, 0, np * nraw * sizeof *ex);
		assert_int_equal(cp_dbq_threads_add(f->q, CP_DBQ_FLAT, gs.id[i], in, ex), 0);
		double si = 0, se = 0;
		for (size_t p = 0; p < np; p++) {
			si += in[p * nraw];
			se += ex[p * nraw];
		}
		assert_true(fabs(si - gs.incl[i]) <= 1e-9 * fabs(gs.incl[i]));
		assert_true(fabs(se - gs.excl[i]) <= 1e-9 * fabs(gs.excl[i]));
	}
	free(in);
	free(ex);
}

static void run(size_t extra, size_t budget, const char *tag)
{
	struct fixture f;
	memset(&f, 0, sizeof f);
	open_db(&f, extra, budget, tag);
	check_scopes(&f);
	check_flat(&f);
	test_db_close(f.path, &f.whole, &f.head, f.q);
}

static void test_few_profiles(void **state)
{
	(void)state;
	run(0, (size_t)1 << 23, "thr-few");
}

static void test_many_ranges(void **state)
{
	(void)state;
	run(0, 3, "thr-ranges");
}

static void test_many_profiles(void **state)
{
	(void)state;
	run(40, 5, "thr-many"); /* blobs of 40+ profiles: compressed */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_few_profiles),
	    cmocka_unit_test(test_many_ranges),
	    cmocka_unit_test(test_many_profiles),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
