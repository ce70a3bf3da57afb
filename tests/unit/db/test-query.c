/* The lazy reader of a database file (db/query.h, db-sqlite-query.c): every scope and its
 * children read lazily equal the whole database read by cp_db_read (structure and every
 * statistic); the page of children sorted by SQLite and the children's sums. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "base/error.h"
#include "db-build.h"
#include "db/db.h"
#include "db/query.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char path[64];
static struct cp_db whole, head;
static struct cp_dbq *q;
static struct test_db_ids ids;

static int setup(void **state)
{
	struct cp_db db;
	test_db_build(&db, &ids);
	cp_db_derived_add(&db, "ipc", "cycles / cputime", "", NULL);
	return test_db_write_open(&db, "query", path, sizeof path, &whole, &head, &q);
}

static int teardown(void **state)
{
	test_db_close(path, &whole, &head, q);
	return 0;
}

static int eq(double x, double y)
{
	return (isnan(x) && isnan(y)) || x == y;
}

static void same_stat(const struct cp_db_stat *a, const struct cp_db_stat *b)
{
	assert_true(eq(a->sum, b->sum) && eq(a->mean, b->mean) && eq(a->min, b->min));
	assert_true(eq(a->max, b->max) && eq(a->stddev, b->stddev));
	assert_int_equal(a->argmax, b->argmax);
	assert_int_equal(a->count, b->count);
}

struct seen {
	uint32_t ids[64];
	size_t n;
};

static int check_row(void *ctx, const struct cp_dbq_row *r)
{
	struct seen *s = ctx;
	assert_true(r->id < whole.nscopes);
	const struct cp_db_scope *w = &whole.scopes[r->id];
	assert_int_equal(r->s.parent, w->parent);
	assert_int_equal(r->s.kind, w->kind);
	assert_int_equal(r->s.proc, w->proc);
	assert_int_equal(r->s.file, w->file);
	assert_int_equal(r->s.line, w->line);
	assert_int_equal(r->s.line_hi, w->line_hi);
	assert_int_equal(r->has_children, w->first_child != CP_DB_NONE);
	for (uint32_t m = 0; m < whole.nmetrics; m++)
		for (int incl = 0; incl < 2; incl++)
			same_stat(&r->stats[m * 2 + incl], cp_db_stat_get(&whole, r->id, m, incl));
	if (s && s->n < 64)
		s->ids[s->n++] = r->id;
	return 0;
}

static void test_scopes_equal_whole(void **state)
{
	assert_int_equal(cp_dbq_nscopes(q), whole.nscopes);
	assert_int_equal(head.nmetrics, whole.nmetrics);
	assert_int_equal(head.nprocs, whole.nprocs);
	for (uint32_t i = 0; i < whole.nscopes; i++) {
		assert_int_equal(cp_dbq_scope(q, i, check_row, NULL), 0);
		struct seen s = {.n = 0};
		assert_int_equal(cp_dbq_children(q, i, check_row, &s), 0);
		size_t n = 0;
		for (uint32_t k = whole.scopes[i].first_child; k != CP_DB_NONE;
		     k = whole.scopes[k].next_sibling)
			assert_int_equal(s.ids[n++], k); /* children in id order */
		assert_int_equal(s.n, n);
	}
	assert_int_equal(cp_dbq_scope(q, (uint32_t)whole.nscopes, check_row, NULL), CP_ENOENT);
}

static int take_id(void *ctx, const struct cp_dbq_row *r)
{
	struct seen *s = ctx;
	s->ids[s->n++] = r->id;
	return 0;
}

static void test_page_and_sums(void **state)
{
	/* main's children: the loop (work below it: 40 ns) and the statement m.c:5 (2 ns) */
	struct seen s = {.n = 0};
	assert_int_equal(cp_dbq_children_page(q, ids.smain, ids.cputime, 0, -1, 0, 10, take_id, &s),
			 0);
	assert_int_equal(s.n, 2);
	double a = cp_db_stat_get(&whole, s.ids[0], ids.cputime, 1)->sum;
	double b = cp_db_stat_get(&whole, s.ids[1], ids.cputime, 1)->sum;
	assert_true(a > b);
	s.n = 0; /* offset 1: the smaller; a minimum above it: only the larger */
	cp_dbq_children_page(q, ids.smain, ids.cputime, 0, -1, 1, 10, take_id, &s);
	assert_int_equal(s.n, 1);
	assert_true(cp_db_stat_get(&whole, s.ids[0], ids.cputime, 1)->sum == b);
	s.n = 0;
	cp_dbq_children_page(q, ids.smain, ids.cputime, 0, b + 1, 0, 10, take_id, &s);
	assert_int_equal(s.n, 1);
	size_t n;
	double sums[CP_DB_MAX_METRICS];
	assert_int_equal(cp_dbq_children_sums(q, ids.smain, &n, sums), 0);
	assert_int_equal(n, 2);
	assert_true(sums[ids.cputime] == a + b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_scopes_equal_whole),
	    cmocka_unit_test(test_page_and_sums),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
