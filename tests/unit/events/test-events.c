/* src/events/events.c, the events module the runtime and the CLI link: the one catalog
 * (the runtime's timers and trigger families, generic perf names and aliases), raw codes,
 * the one period syntax (counts, time suffixes, fN frequency mode), the encoded form the
 * CLI passes in CALLPATH_EVENTS, and the attribute opened per thread. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "events/events.h"

#include <linux/perf_event.h>
#include <string.h>

static int parse(const char *spec, struct cp_ev *ev)
{
	char err[512];
	return cp_ev_parse(spec, strlen(spec), ev, err, sizeof err);
}

static void test_names(void **state)
{
	struct cp_ev ev;
	assert_int_equal(parse("cycles", &ev), CP_EV_OK);
	assert_int_equal(ev.kind, CP_EV_HARDWARE);
	assert_int_equal(ev.type, PERF_TYPE_HARDWARE);
	assert_int_equal(ev.config, PERF_COUNT_HW_CPU_CYCLES);
	assert_int_equal(ev.period, 2000003);
	assert_int_equal(parse("branch-instructions", &ev), CP_EV_OK);
	assert_int_equal(ev.config, PERF_COUNT_HW_BRANCH_INSTRUCTIONS);
	assert_string_equal(ev.name, "branches"); /* aliases are measured as their event */
	assert_int_equal(parse("PAPI_TOT_INS@f100", &ev), CP_EV_OK);
	assert_int_equal(ev.config, PERF_COUNT_HW_INSTRUCTIONS);
	assert_string_equal(ev.name, "instructions");
	assert_string_equal(cp_ev_canonical("cs"), "context-switches");
	assert_string_equal(cp_ev_canonical("cycles"), "cycles");
	assert_int_equal(parse("LLC-load-misses", &ev), CP_EV_OK);
	assert_int_equal(ev.type, PERF_TYPE_HW_CACHE);
	assert_int_equal(ev.config, PERF_COUNT_HW_CACHE_LL | (PERF_COUNT_HW_CACHE_OP_READ << 8) |
					(PERF_COUNT_HW_CACHE_RESULT_MISS << 16));
	assert_int_equal(parse("page-faults", &ev), CP_EV_OK);
	assert_true(cp_ev_is_software(&ev));
	assert_int_equal(ev.config, PERF_COUNT_SW_PAGE_FAULTS);
	assert_int_equal(ev.period, 100);
	assert_int_equal(parse("cs", &ev), CP_EV_OK);
	assert_int_equal(ev.config, PERF_COUNT_SW_CONTEXT_SWITCHES);
	assert_int_equal(parse("r01c2", &ev), CP_EV_OK);
	assert_int_equal(ev.kind, CP_EV_RAW);
	assert_int_equal(ev.type, PERF_TYPE_RAW);
	assert_int_equal(ev.config, 0x1c2);
	assert_int_equal(parse("rxyz", &ev), CP_EV_UNKNOWN);
	assert_int_equal(parse("r", &ev), CP_EV_UNKNOWN);
	assert_int_equal(parse("Cycles", &ev), CP_EV_UNKNOWN);
	char longname[128];
	memset(longname, 'a', sizeof longname - 1);
	longname[sizeof longname - 1] = 0;
	assert_int_equal(parse(longname, &ev), CP_EV_BAD_SPEC);
}

static void test_periods(void **state)
{
	struct cp_ev ev;
	assert_int_equal(parse("page-faults@16", &ev), CP_EV_OK);
	assert_int_equal(ev.period, 16);
	assert_false(ev.freq);
	assert_int_equal(parse("page-faults@1", &ev), CP_EV_OK);
	assert_int_equal(parse("page-faults@0", &ev), CP_EV_LOW_PERIOD);
	assert_int_equal(parse("page-faults@10ms", &ev), CP_EV_BAD_PERIOD); /* not a time */
	assert_int_equal(parse("page-faults@", &ev), CP_EV_BAD_PERIOD);
	assert_int_equal(parse("page-faults@-5", &ev), CP_EV_BAD_PERIOD);
	assert_int_equal(parse("page-faults@99999999999999999999999", &ev), CP_EV_BAD_PERIOD);
	assert_int_equal(parse("cycles@999", &ev), CP_EV_LOW_PERIOD);
	assert_int_equal(parse("cycles@1000", &ev), CP_EV_OK);
	assert_int_equal(parse("cpu-clock@250us", &ev), CP_EV_OK);
	assert_int_equal(ev.period, 250000);
	assert_int_equal(parse("task-clock@2ms", &ev), CP_EV_OK);
	assert_int_equal(ev.period, 2000000);
	assert_int_equal(parse("cpu-clock@1s", &ev), CP_EV_OK);
	assert_int_equal(ev.period, 1000000000);
	assert_int_equal(parse("cpu-clock@5us", &ev), CP_EV_LOW_PERIOD); /* < 10 us */
	assert_int_equal(parse("cpu-clock@5min", &ev), CP_EV_BAD_PERIOD);
	assert_int_equal(parse("cycles@f4000", &ev), CP_EV_OK);
	assert_true(ev.freq);
	assert_int_equal(ev.period, 4000);
	assert_int_equal(parse("cpu-clock@f1000", &ev), CP_EV_OK);
	assert_true(ev.freq);
	assert_int_equal(parse("cycles@f0", &ev), CP_EV_BAD_PERIOD);
	assert_int_equal(parse("cycles@f200000", &ev), CP_EV_BAD_PERIOD);
	assert_int_equal(parse("cycles@f", &ev), CP_EV_BAD_PERIOD);
	char err[512];
	assert_int_equal(cp_ev_parse("cycles@x", 8, &ev, err, sizeof err), CP_EV_BAD_PERIOD);
	assert_string_equal(err, "bad period 'x' for cycles: give a count of events per sample of "
				 "at least 1000, or fN for N samples per second (e.g. "
				 "cycles@10000, cycles@f1000)");
}

static void test_encoding(void **state)
{
	struct cp_ev ev, back;
	char buf[160];
	memset(&ev, 0, sizeof ev);
	strcpy(ev.name, "FP_ARITH:SCALAR_DOUBLE");
	ev.kind = CP_EV_PMU;
	ev.type = 4;
	ev.config = 0x1c7;
	ev.config1 = 0x12;
	ev.period = 100003;
	assert_int_equal(cp_ev_encode(&ev, buf, sizeof buf), 0);
	assert_string_equal(buf, "FP_ARITH:SCALAR_DOUBLE@100003#4.1c7.12.0");
	assert_int_equal(parse(buf, &back), CP_EV_OK);
	assert_string_equal(back.name, "FP_ARITH:SCALAR_DOUBLE");
	assert_int_equal(back.kind, CP_EV_PMU);
	assert_int_equal(back.type, 4);
	assert_int_equal(back.config, 0x1c7);
	assert_int_equal(back.config1, 0x12);
	assert_int_equal(back.period, 100003);
	/* A software event in encoded form keeps its nature (clock: period in ns). */
	assert_int_equal(parse("perf::CPU-CLOCK@f500#1.0.0.0", &back), CP_EV_OK);
	assert_true(cp_ev_is_software(&back) && back.time_based && back.freq);
	assert_int_equal(back.period, 500);
	assert_int_equal(cp_ev_encode(&ev, buf, 20), -1);
	assert_int_equal(parse("x@5#4.zz.0.0", &back), CP_EV_BAD_SPEC);
	assert_int_equal(parse("x@5#4.1.0", &back), CP_EV_BAD_SPEC);
	assert_int_equal(parse("x@5#4.1.0.0.0", &back), CP_EV_BAD_SPEC);
}

static void test_attr(void **state)
{
	struct cp_ev ev;
	struct perf_event_attr a;
	assert_int_equal(parse("page-faults@f300", &ev), CP_EV_OK);
	cp_ev_attr(&ev, 1, &a);
	assert_int_equal(a.size, sizeof a);
	assert_int_equal(a.type, PERF_TYPE_SOFTWARE);
	assert_int_equal(a.config, PERF_COUNT_SW_PAGE_FAULTS);
	assert_true(a.freq);
	assert_int_equal(a.sample_freq, 300);
	assert_int_equal(a.read_format, CP_EV_READ_FORMAT);
	assert_true(a.disabled && a.exclude_kernel && a.exclude_hv);
	assert_int_equal(a.wakeup_events, 1);
}

/* The runtime's own events: one catalog with perf's, one period syntax. */
static void test_runtime_events(void **state)
{
	struct cp_ev ev;
	char err[512];
	assert_int_equal(parse("cputime", &ev), CP_EV_OK);
	assert_int_equal(ev.kind, CP_EV_TIMER);
	assert_true(ev.time_based);
	assert_int_equal(ev.period, 1000000);
	assert_int_equal(ev.min_period, 10000);
	assert_int_equal(parse("realtime@250us", &ev), CP_EV_OK);
	assert_int_equal(ev.kind, CP_EV_TIMER);
	assert_int_equal(ev.period, 250000);
	assert_int_equal(parse("alloc", &ev), CP_EV_OK);
	assert_int_equal(ev.kind, CP_EV_TRIGGER);
	assert_true(cp_ev_kind_is_runtime(ev.kind));
	assert_false(cp_ev_kind_is_runtime(CP_EV_SOFTWARE));
	assert_int_equal(cp_ev_parse("io@10", 5, &ev, err, sizeof err), CP_EV_BAD_PERIOD);
	assert_int_equal(ev.kind, CP_EV_TRIGGER);
	assert_string_equal(err, "'io' takes no period: it counts every call (remove '@10')");
	assert_int_equal(parse("wait@", &ev), CP_EV_BAD_PERIOD);
	assert_int_equal(parse("cputimex", &ev), CP_EV_UNKNOWN);
	/* The runtime's rows come first, and only they are runtime kinds. */
	assert_true(cp_ev_runtime_len >= 5 && cp_ev_runtime_len < cp_ev_table_len);
	for (size_t i = 0; i < cp_ev_table_len; i++) {
		const struct cp_ev_desc *d = &cp_ev_table[i];
		assert_int_equal(cp_ev_kind_is_runtime(d->kind), i < cp_ev_runtime_len);
		assert_ptr_equal(cp_ev_find(d->name, strlen(d->name)), d);
		assert_non_null(d->unit);
		assert_true(d->kind != CP_EV_TRIGGER || d->default_period == 0);
		assert_true(d->kind == CP_EV_TRIGGER || d->default_period >= d->min_period);
	}
}

/* Timer periods: nanoseconds with an optional suffix; no frequency mode; a period below
 * the minimum is told apart from a malformed one (the runtime raises it, the CLI refuses). */
static void test_timer_periods(void **state)
{
	static const struct {
		const char *spec;
		int rc;
		uint64_t period;
	} cases[] = {
	    {"cputime@1000000", CP_EV_OK, 1000000},
	    {"cputime@500us", CP_EV_OK, 500000},
	    {"cputime@1ms", CP_EV_OK, 1000000},
	    {"cputime@2s", CP_EV_OK, 2000000000},
	    {"cputime@10000ns", CP_EV_OK, 10000},
	    {"cputime@10ns", CP_EV_LOW_PERIOD, 10},
	    {"cputime@0", CP_EV_LOW_PERIOD, 0},
	    {"cputime@fast", CP_EV_BAD_PERIOD, 0},
	    {"cputime@5 ms", CP_EV_BAD_PERIOD, 0},
	    {"cputime@5min", CP_EV_BAD_PERIOD, 0},
	    {"cputime@", CP_EV_BAD_PERIOD, 0},
	    {"cputime@f1000", CP_EV_BAD_PERIOD, 0},
	    {"cputime@99999999999999999999", CP_EV_BAD_PERIOD, 0},
	    {"cputime@18446744073709551615s", CP_EV_BAD_PERIOD, 0},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct cp_ev ev;
		int rc = parse(cases[i].spec, &ev);
		if (rc != cases[i].rc)
			fail_msg("%s: %d, expected %d", cases[i].spec, rc, cases[i].rc);
		if (rc != CP_EV_BAD_PERIOD)
			assert_int_equal(ev.period, cases[i].period);
		assert_false(ev.freq);
	}
	char err[512];
	struct cp_ev ev;
	assert_int_equal(cp_ev_parse("realtime@5us", 12, &ev, err, sizeof err), CP_EV_LOW_PERIOD);
	assert_string_equal(err, "bad period '5us' for realtime: give a number of ns with an "
				 "optional ns/us/ms/s suffix, at least 10000 ns (e.g. "
				 "realtime@500us)");
}

/* The runtime builds per set of trigger families are named from the catalog's trigger rows,
 * in their order (the runtime's CP_SYNC_* bits). */
static void test_trigger_families(void **state)
{
	char name[64];
	assert_int_equal(cp_trigger_family_bit("alloc"), 1);
	assert_int_equal(cp_trigger_family_bit("io"), 2);
	assert_int_equal(cp_trigger_family_bit("wait@5"), 4);
	assert_int_equal(cp_trigger_family_bit("cputime"), 0);
	assert_int_equal(cp_trigger_family_bit("cycles"), 0);
	assert_int_equal(cp_trigger_family_bit("allocx"), 0);
	assert_int_equal(cp_runtime_lib_name(0, name, sizeof name), 0);
	assert_string_equal(name, "libcallpath-rt.so");
	assert_int_equal(cp_runtime_lib_name(5, name, sizeof name), 0);
	assert_string_equal(name, "libcallpath-rt-alloc-wait.so");
	assert_int_equal(cp_runtime_lib_name(7, name, sizeof name), 0);
	assert_string_equal(name, "libcallpath-rt-alloc-io-wait.so");
	assert_int_equal(cp_runtime_lib_name(7, name, 20), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_names),
	    cmocka_unit_test(test_periods),
	    cmocka_unit_test(test_encoding),
	    cmocka_unit_test(test_attr),
	    cmocka_unit_test(test_runtime_events),
	    cmocka_unit_test(test_timer_periods),
	    cmocka_unit_test(test_trigger_families),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
