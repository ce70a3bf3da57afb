/* The runtime's events configuration: the sample-source table names exactly the timers of
 * the one event catalog (events/events.h), the rest of the catalog's runtime rows are the
 * trigger families; CALLPATH_EVENTS becomes metrics (timers with their periods, raised to
 * the minimum; perf events one metric each, named as typed). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "events/events.h"
#include "runtime/core/runtime.h"
#include "runtime/core/sync.h"
#include "runtime/sample/source.h"

#include <stdlib.h>
#include <string.h>

static void test_table_matches_catalog(void **state)
{
	size_t n = 0;
	for (; cp_sample_sources[n]; n++) {
		const struct cp_sample_source *s = cp_sample_sources[n];
		const struct cp_ev_desc *e = cp_ev_find(s->name, strlen(s->name));
		assert_non_null(e);
		assert_int_equal(e->kind, CP_EV_TIMER);
		assert_string_equal(e->unit, s->unit);
		assert_non_null(s->thread_start);
		assert_non_null(s->thread_stop);
		assert_non_null(s->claims);
		assert_non_null(s->process_init);
		assert_ptr_equal(cp_sample_source_find(s->name, (unsigned)strlen(s->name)), s);
	}
	/* The rest of the runtime's rows: synchronous trigger families (core/sync.c). */
	size_t families = 0, timers = 0;
	for (size_t i = 0; i < cp_ev_runtime_len; i++) {
		const struct cp_ev_desc *e = &cp_ev_table[i];
		if (e->kind == CP_EV_TIMER) {
			assert_non_null(cp_sample_source_find(e->name, (unsigned)strlen(e->name)));
			timers++;
		} else {
			assert_int_equal(e->kind, CP_EV_TRIGGER);
			assert_true(cp_sync_is_family(e->name, strlen(e->name)));
			families++;
		}
	}
	assert_int_equal(timers, n);
	assert_int_equal(families, 3);
	assert_null(cp_sample_source_find("cpu", 3));
}

/* Timers from CALLPATH_EVENTS: the period as given, or the minimum when below it (the
 * CLI refuses such periods; the runtime, set by hand, raises them); a malformed one
 * disables profiling. */
static void test_config_timers(void **state)
{
	char dir[] = "/tmp/cp-test-config.XXXXXX";
	assert_non_null(mkdtemp(dir));
	setenv("CALLPATH_OUTPUT", dir, 1);
	setenv("CALLPATH_EVENTS", "cputime@2ms,realtime@10ns", 1);
	cp_rt.nmetrics = 0;
	assert_int_equal(cp_config_load(0), 0);
	assert_int_equal(cp_rt.nmetrics, 2);
	assert_string_equal(cp_rt.metrics[0].src->name, "cputime");
	assert_int_equal(cp_rt.metrics[0].period, 2000000);
	assert_string_equal(cp_rt.metrics[1].src->name, "realtime");
	assert_int_equal(cp_rt.metrics[1].period, 10000);
	cp_rt.nmetrics = 0;
	setenv("CALLPATH_EVENTS", "cputime@5min", 1);
	assert_int_equal(cp_config_load(0), -1);
	cp_rt.nmetrics = 0;
	setenv("CALLPATH_EVENTS", "cputime@f100", 1);
	assert_int_equal(cp_config_load(0), -1);
	cp_rt.nmetrics = 0;
	setenv("CALLPATH_EVENTS", "nosuchevent", 1);
	assert_int_equal(cp_config_load(0), -1);
	cp_rt.nmetrics = 0;
	unsetenv("CALLPATH_OUTPUT");
	unsetenv("CALLPATH_EVENTS");
	rmdir(dir);
}

static void test_config_metrics(void **state)
{
	const char *specs[] = {"cpu-clock@500us", "page-faults@16", "r01c2@f100"};
	cp_rt.nmetrics = 0;
	for (unsigned i = 0; i < 3; i++) {
		struct cp_metric *m = &cp_rt.metrics[cp_rt.nmetrics];
		m->index = cp_rt.nmetrics;
		assert_int_equal(cp_perf_config(specs[i], strlen(specs[i]), m, 0), 1);
		cp_rt.nmetrics++;
	}
	assert_string_equal(cp_rt.metrics[0].src->name, "cpu-clock");
	assert_string_equal(cp_rt.metrics[0].src->unit, "ns");
	assert_int_equal(cp_rt.metrics[0].period, 500000);
	assert_string_equal(cp_rt.metrics[1].src->name, "page-faults");
	assert_string_equal(cp_rt.metrics[1].src->unit, "events");
	assert_int_equal(cp_rt.metrics[1].src->source, CP_MF_SRC_PERF);
	assert_string_equal(cp_rt.metrics[2].src->name, "r01c2");
	assert_int_equal(cp_rt.metrics[2].period, 0); /* frequency mode */
	struct cp_metric spare = {.index = 3};
	assert_int_equal(cp_perf_config("cputime", 7, &spare, 0), 0);
	assert_int_equal(cp_perf_config("cycles@0", 8, &spare, 0), -1);
	cp_rt.nmetrics = 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_table_matches_catalog),
	    cmocka_unit_test(test_config_timers),
	    cmocka_unit_test(test_config_metrics),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
