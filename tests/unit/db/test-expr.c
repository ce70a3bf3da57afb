/* Derived-metric formulas (expr.h) and derived metrics in the database (db.h): precedence,
 * numbers, functions, names with '-', errors with their column, NaN for no value, stats of
 * derived metrics, presets. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "base/error.h"
#include "db-build.h"
#include "db/db.h"
#include "db/expr.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static const char *const names[] = {
    "a", "b", "cycles", "fp_ops", "cache-misses", "cache", "FP_ARITH:SCALAR_DOUBLE", "x.y", "max"};
static const double values[] = {2, 8, 100, 30, 7, 1000, 5, 0.5, 9};

static uint32_t lookup(void *ctx, const char *name, size_t len)
{
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (strlen(names[i]) == len && !memcmp(names[i], name, len))
			return (uint32_t)i;
	return UINT32_MAX;
}

static double eval(const char *text)
{
	struct cp_expr *e;
	int rc = cp_expr_parse(text, lookup, NULL, &e);
	if (rc) {
		fprintf(stderr, "parse '%s': %s\n", text, cp_error_message());
		fail();
	}
	double r = cp_expr_eval(e, values);
	cp_expr_free(e);
	return r;
}

/* The error message of a formula that must not parse. */
static const char *err(const char *text)
{
	struct cp_expr *e = (struct cp_expr *)1;
	cp_error_clear();
	int rc = cp_expr_parse(text, lookup, NULL, &e);
	assert_int_equal(rc, CP_EINVAL);
	assert_null(e);
	return cp_error_message();
}

static void test_precedence(void **state)
{
	assert_true(eval("1 + 2 * 3") == 7);
	assert_true(eval("(1 + 2) * 3") == 9);
	assert_true(eval("8 / 2 / 2") == 2); /* left associative */
	assert_true(eval("8 - 2 - 2") == 4);
	assert_true(eval("-2 * 3") == -6);
	assert_true(eval("2 * -3") == -6);
	assert_true(eval("--2") == 2);
	assert_true(eval("+2") == 2);
	assert_true(eval("-(a + b)") == -10);
	assert_true(eval("a*b+cycles/a") == 66);
	assert_true(eval("  ( ( a ) )  ") == 2);
}

static void test_numbers(void **state)
{
	assert_true(eval("1e6") == 1e6);
	assert_true(eval("2.5E-1") == 0.25);
	assert_true(eval(".5") == 0.5);
	assert_true(eval("3.") == 3);
	assert_true(eval("1e+2*a") == 200);
}

static void test_functions(void **state)
{
	assert_true(eval("min(a, b)") == 2);
	assert_true(eval("max(a,b)") == 8);
	assert_true(eval("abs(a - b)") == 6);
	assert_true(eval("sqrt(b * a)") == 4);
	assert_true(eval("max (a, min(b, 3)) * 2") == 6);
	/* a metric may be named like a function: without '(' it is the metric */
	assert_true(eval("max + 1") == 10);
}

static void test_names(void **state)
{
	/* '-' inside a known name */
	assert_true(eval("cache-misses") == 7);
	assert_true(eval("cache-misses/cache") == 0.007);
	/* the longest known name, cut at '-': cycles-fp_ops is a subtraction */
	assert_true(eval("2*cycles-fp_ops") == 170);
	assert_true(eval("2*cycles - fp_ops") == 170);
	assert_true(eval("cache-a") == 998);
	assert_true(eval("cache-misses-a") == 5);
	assert_true(eval("FP_ARITH:SCALAR_DOUBLE*2") == 10);
	assert_true(eval("x.y*4") == 2);
}

static void test_errors(void **state)
{
	assert_non_null(strstr(err("a + nosuch"), "column 5: unknown metric 'nosuch'"));
	assert_non_null(strstr(err("cache - misses"), "column 9: unknown metric 'misses'"));
	assert_non_null(strstr(err("a +"), "column 4: unexpected end of formula"));
	assert_non_null(strstr(err(""), "column 1: unexpected end"));
	assert_non_null(strstr(err("(a + b"), "column 1: unbalanced '('"));
	assert_non_null(strstr(err("a + b)"), "column 6: unbalanced ')'"));
	assert_non_null(strstr(err("a b"), "column 3: expected an operator"));
	assert_non_null(strstr(err("2a"), "column 2: expected an operator"));
	assert_non_null(strstr(err("a $ b"), "column 3: unexpected character '$'"));
	assert_non_null(strstr(err("log(a)"), "column 1: unknown function"));
	assert_non_null(strstr(err("min(a)"), "column 6: expected ','"));
	assert_non_null(strstr(err("abs(a, b)"), "column 6: too many arguments"));
	assert_non_null(strstr(err("a * * b"), "column 5: unexpected character '*'"));
	assert_non_null(strstr(err("a + nosuch"), "formula 'a + nosuch'"));
}

static void test_deep(void **state)
{
	static char deep[4096], ok[512];
	memset(deep, '(', 2000);
	strcpy(deep + 2000, "1");
	assert_non_null(strstr(err(deep), "nested too deeply"));
	memset(deep, '-', 3000);
	strcpy(deep + 3000, "1");
	assert_non_null(strstr(err(deep), "nested too deeply"));
	/* 100 levels are fine */
	memset(ok, '(', 100);
	strcpy(ok + 100, "a");
	memset(ok + 101, ')', 100);
	ok[201] = 0;
	assert_true(eval(ok) == 2);
}

static void test_nan(void **state)
{
	assert_true(isnan(eval("a / 0")));
	assert_true(isnan(eval("0 / 0")));
	assert_true(isnan(eval("a / (b - 8)")));
	assert_true(isnan(eval("sqrt(a - b)")));
	assert_true(isnan(eval("a / 0 + 1")));
	assert_true(isnan(eval("max(a / 0, 1)")));
	assert_true(isnan(eval("min(1, sqrt(-1))")));
	assert_true(eval("sqrt(0)") == 0);
}

static void test_inputs(void **state)
{
	struct cp_expr *e;
	assert_int_equal(cp_expr_parse("a*b + a/cycles", lookup, NULL, &e), 0);
	uint32_t ids[8];
	assert_int_equal(cp_expr_inputs(e, ids, 8), 3);
	assert_int_equal(ids[0], 0);
	assert_int_equal(ids[1], 1);
	assert_int_equal(ids[2], 2);
	cp_expr_free(e);
}

static void test_derived_stats(void **state)
{
	struct cp_db db;
	struct test_db_ids t;
	test_db_build(&db, &t);
	/* before finish */
	int cpn = cp_db_derived_add(&db, "cpn", "cycles / cputime", "", "cycles per ns");
	assert_true(cpn >= 0);
	assert_int_equal(db.metrics[cpn].kind, CP_DB_METRIC_DERIVED);
	assert_string_equal(db.metrics[cpn].formula, "cycles / cputime");
	cp_db_finish(&db);
	const struct cp_db_stat *st = cp_db_stat_get(&db, t.swork, (uint32_t)cpn, 1);
	assert_true(st->sum == 2); /* 80 / 40 */
	assert_true(st->max == 2); /* 60 / 30 */
	assert_true(st->min == 2); /* 20 / 10 */
	assert_true(fabs(st->mean - 2) < 1e-12);
	assert_int_equal(st->count, 2); /* max count of the inputs */
	assert_int_equal(st->argmax, CP_DB_NONE);
	/* main's statement: cputime but no cycles: 0/2 = 0 */
	st = cp_db_stat_get(&db, t.smstmt, (uint32_t)cpn, 0);
	assert_int_equal(st->count, 1);
	assert_true(st->sum == 0);
	/* a loop's exclusive value is its own code's: 80 / 40 */
	st = cp_db_stat_get(&db, t.sloop2, (uint32_t)cpn, 0);
	assert_int_equal(st->count, 2);
	assert_true(st->sum == 2);
	/* no value anywhere (the outer loop only calls): count 0, zeros */
	st = cp_db_stat_get(&db, t.sloop1, (uint32_t)cpn, 0);
	assert_int_equal(st->count, 0);
	assert_true(st->sum == 0);
	/* after finish: stats computed at once, raw stats kept */
	int nspc = cp_db_derived_add_spec(&db, " npc = cputime/cycles ");
	assert_true(nspc > cpn);
	assert_int_equal(cp_db_metric_find(&db, "npc"), (uint32_t)nspc);
	st = cp_db_stat_get(&db, 0, (uint32_t)nspc, 1);
	assert_true(st->sum == 42.0 / 80);
	/* at the main statement: 2 / 0 = no value */
	assert_true(isnan(cp_db_stat_get(&db, t.smstmt, (uint32_t)nspc, 0)->sum));
	assert_true(cp_db_stat_get(&db, 0, t.cputime, 1)->sum == 42);
	assert_true(cp_db_stat_get(&db, t.sstmt, t.cycles, 0)->max == 60);
	assert_true(cp_db_stat_get(&db, t.swork, (uint32_t)cpn, 1)->sum == 2);
	/* a derived metric over a derived one */
	int twice = cp_db_derived_add(&db, "twice", "2*cpn", "", NULL);
	assert_true(cp_db_stat_get(&db, t.swork, (uint32_t)twice, 1)->sum == 4);
	/* errors */
	assert_int_equal(cp_db_derived_add(&db, "cpn", "1", "", NULL), CP_EINVAL);
	assert_non_null(strstr(cp_error_message(), "exists"));
	assert_int_equal(cp_db_derived_add(&db, "bad", "cycles / nosuch", "", NULL), CP_EINVAL);
	assert_non_null(strstr(cp_error_message(), "derived metric 'bad'"));
	assert_non_null(strstr(cp_error_message(), "column 10: unknown metric 'nosuch'"));
	assert_int_equal(cp_db_derived_add(&db, "9x", "1", "", NULL), CP_EINVAL);
	assert_int_equal(cp_db_derived_add_spec(&db, "=1"), CP_EINVAL);
	assert_int_equal(cp_db_derived_add_spec(&db, "noformula"), CP_EINVAL);
	cp_db_release(&db);
}

static uint32_t add_raw(struct cp_db *db, const char *name)
{
	struct cp_db_metric m = {.name = name, .unit = "events"};
	return cp_db_metric_add(db, &m);
}

static void test_presets(void **state)
{
	struct cp_db db;
	cp_db_init(&db);
	add_raw(&db, "cputime");
	assert_int_equal(cp_db_presets_add(&db, 0), 0);
	cp_db_release(&db);

	cp_db_init(&db);
	add_raw(&db, "cputime");
	add_raw(&db, "cycles");
	add_raw(&db, "instructions");
	add_raw(&db, "cache-misses");
	add_raw(&db, "cache-references");
	add_raw(&db, "FP_ARITH:SCALAR_DOUBLE");
	assert_int_equal(cp_db_presets_add(&db, 4), 4); /* no branches: no branch-miss-ratio */
	assert_int_not_equal(cp_db_metric_find(&db, "ipc"), CP_DB_NONE);
	assert_int_not_equal(cp_db_metric_find(&db, "cache-miss-ratio"), CP_DB_NONE);
	assert_int_equal(cp_db_metric_find(&db, "branch-miss-ratio"), CP_DB_NONE);
	uint32_t w = cp_db_metric_find(&db, "waste");
	assert_string_equal(db.metrics[w].formula, "4 * cycles - FP_ARITH:SCALAR_DOUBLE");
	uint32_t mf = cp_db_metric_find(&db, "mflops");
	assert_string_equal(db.metrics[mf].formula, "FP_ARITH:SCALAR_DOUBLE / cputime * 1000");
	/* again: nothing new */
	assert_int_equal(cp_db_presets_add(&db, 0), 0);
	cp_db_release(&db);

	cp_db_init(&db);
	add_raw(&db, "cycles");
	add_raw(&db, "PAPI_FP_OPS");
	add_raw(&db, "fp_ops");
	assert_int_equal(cp_db_presets_add(&db, 0), 1);
	w = cp_db_metric_find(&db, "waste");
	assert_string_equal(db.metrics[w].formula, "2 * cycles - fp_ops");
	cp_db_release(&db);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_precedence),	  cmocka_unit_test(test_numbers),
	    cmocka_unit_test(test_functions),	  cmocka_unit_test(test_names),
	    cmocka_unit_test(test_errors),	  cmocka_unit_test(test_nan),
	    cmocka_unit_test(test_deep),	  cmocka_unit_test(test_inputs),
	    cmocka_unit_test(test_derived_stats), cmocka_unit_test(test_presets),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
