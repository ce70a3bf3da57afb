/* Every exporter's start (cp_export_start): an unfinished database or one without a
 * measured metric is refused, the default metric is the first measured time metric, an
 * option picks a measured metric and a derived one is refused, by all five exporters
 * alike, before they write anything. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "../db/db-build.h"
#include "base/error.h"
#include "export/export-impl.h"
#include "export/export.h"

#include <stdio.h>
#include <string.h>

typedef int (*exporter_fn)(const struct cp_db *, const struct cp_export_options *, FILE *);
static const exporter_fn exporters[] = {cp_export_callgrind, cp_export_pprof, cp_export_folded,
					cp_export_speedscope, cp_export_gmon};
#define NEXPORTERS (sizeof exporters / sizeof exporters[0])

/* Each exporter returns want and writes nothing; the message contains what. */
static void assert_all_refuse(const struct cp_db *db, const struct cp_export_options *o, int want,
			      const char *what)
{
	for (size_t i = 0; i < NEXPORTERS; i++) {
		FILE *f = tmpfile();
		assert_non_null(f);
		cp_error_clear();
		assert_int_equal(exporters[i](db, o, f), want);
		assert_int_equal(ftell(f), 0);
		assert_non_null(strstr(cp_error_message(), what));
		fclose(f);
	}
}

static void test_unfinished(void **state)
{
	(void)state;
	struct cp_db db;
	struct test_db_ids t;
	test_db_build(&db, &t);
	uint32_t m = 7;
	assert_int_equal(cp_export_start(&db, NULL, &m), CP_EINTERNAL);
	assert_all_refuse(&db, NULL, CP_EINTERNAL, "not finished");
	cp_db_release(&db);
}

static void test_no_metric(void **state)
{
	(void)state;
	struct cp_db db;
	cp_db_init(&db);
	assert_int_equal(cp_db_finish(&db), 0);
	uint32_t m;
	assert_int_equal(cp_export_start(&db, NULL, &m), CP_EINVAL);
	assert_all_refuse(&db, NULL, CP_EINVAL, "no measured metric");
	cp_db_release(&db);
}

static void test_pick(void **state)
{
	(void)state;
	struct cp_db db;
	struct test_db_ids t;
	test_db_build(&db, &t);
	assert_true(cp_db_derived_add(&db, "ratio", "cycles / cputime", "", NULL) >= 0);
	assert_int_equal(cp_db_finish(&db), 0);
	struct cp_export_options o;
	cp_export_options_init(&o);
	uint32_t m = 7;
	assert_int_equal(cp_export_start(&db, &o, &m), 0);
	assert_int_equal(m, t.cputime); /* the time metric */
	assert_int_equal(cp_export_start(&db, NULL, &m), 0);
	assert_int_equal(m, t.cputime);
	o.metric = t.cycles;
	assert_int_equal(cp_export_start(&db, &o, &m), 0);
	assert_int_equal(m, t.cycles);
	o.metric = cp_db_metric_find(&db, "ratio");
	assert_int_not_equal(o.metric, CP_DB_NONE);
	assert_int_equal(cp_export_start(&db, &o, &m), CP_EINVAL);
	assert_all_refuse(&db, &o, CP_EINVAL, "derived metric");
	o.metric = 99;
	assert_all_refuse(&db, &o, CP_EINVAL, "no metric 99");
	cp_db_release(&db);
}

/* Without a time metric the first measured one is the default. */
static void test_pick_untimed(void **state)
{
	(void)state;
	struct cp_db db;
	cp_db_init(&db);
	struct cp_db_metric met;
	memset(&met, 0, sizeof met);
	met.name = "cycles";
	met.unit = "events";
	met.period = 1000;
	cp_db_metric_add(&db, &met);
	met.name = "instructions";
	cp_db_metric_add(&db, &met);
	assert_int_equal(cp_db_finish(&db), 0);
	uint32_t m = 7;
	assert_int_equal(cp_export_start(&db, NULL, &m), 0);
	assert_int_equal(m, 0);
	cp_db_release(&db);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_unfinished),
	    cmocka_unit_test(test_no_metric),
	    cmocka_unit_test(test_pick),
	    cmocka_unit_test(test_pick_untimed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
