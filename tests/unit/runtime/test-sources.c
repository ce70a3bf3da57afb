/* The sample-source table and the CLI's event catalog name the same events, and the
 * catalog's period parser accepts exactly the documented syntax. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "runtime/sample/catalog.h"
#include "runtime/sample/source.h"
#include "runtime/core/sync.h"

#include <string.h>

static void test_table_matches_catalog(void **state)
{
	size_t n = 0;
	for (; cp_sample_sources[n]; n++) {
		const struct cp_sample_source *s = cp_sample_sources[n];
		const struct cp_event_info *e = cp_event_lookup(s->name, strlen(s->name));
		assert_non_null(e);
		assert_string_equal(e->unit, s->unit);
		assert_non_null(s->thread_start);
		assert_non_null(s->thread_stop);
		assert_non_null(s->claims);
		assert_non_null(s->process_init);
		assert_ptr_equal(cp_sample_source_find(s->name, (unsigned)strlen(s->name)), s);
	}
	/* The rest of the catalog: synchronous trigger families (core/sync.c). */
	size_t families = 0;
	for (size_t i = 0; i < CP_EVENT_CATALOG_LEN; i++) {
		const char *name = cp_event_catalog[i].name;
		if (!cp_sample_source_find(name, (unsigned)strlen(name))) {
			assert_true(cp_sync_is_family(name, strlen(name)));
			families++;
		}
	}
	assert_int_equal(n + families, CP_EVENT_CATALOG_LEN);
	assert_int_equal(families, 3);
	assert_null(cp_sample_source_find("cpu", 3));
	assert_null(cp_event_lookup("cputimex", 8));
}

static void test_period_syntax(void **state)
{
	uint64_t v;
	assert_int_equal(cp_event_parse_period("1000000", &v), 0);
	assert_int_equal(v, 1000000);
	assert_int_equal(cp_event_parse_period("500us", &v), 0);
	assert_int_equal(v, 500000);
	assert_int_equal(cp_event_parse_period("1ms", &v), 0);
	assert_int_equal(v, 1000000);
	assert_int_equal(cp_event_parse_period("2s", &v), 0);
	assert_int_equal(v, 2000000000);
	assert_int_equal(cp_event_parse_period("10ns", &v), 0);
	assert_int_equal(v, 10);
	assert_int_equal(cp_event_parse_period("fast", &v), -1);
	assert_int_equal(cp_event_parse_period("5 ms", &v), -1);
	assert_int_equal(cp_event_parse_period("5min", &v), -1);
	assert_int_equal(cp_event_parse_period("", &v), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table_matches_catalog),
		cmocka_unit_test(test_period_syntax),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
