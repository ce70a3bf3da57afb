/* src/events/events.c, the part of perf event naming the runtime links: generic names and
 * aliases, raw codes, the period syntax (counts, time suffixes, fN frequency mode), the
 * encoded form the CLI passes in CALLPATH_EVENTS, and the attribute opened per thread; and
 * sample/perf-event.c's configuration (one metric per event, named as typed). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "events/events.h"
#include "runtime/core/runtime.h"

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
	assert_int_equal(parse("cputime", &ev), CP_EV_UNKNOWN); /* the catalog's, not ours */
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
	assert_int_equal(parse("page-faults@0", &ev), CP_EV_BAD_PERIOD);
	assert_int_equal(parse("page-faults@10ms", &ev), CP_EV_BAD_PERIOD); /* not a time */
	assert_int_equal(parse("page-faults@", &ev), CP_EV_BAD_PERIOD);
	assert_int_equal(parse("page-faults@-5", &ev), CP_EV_BAD_PERIOD);
	assert_int_equal(parse("page-faults@99999999999999999999999", &ev), CP_EV_BAD_PERIOD);
	assert_int_equal(parse("cycles@999", &ev), CP_EV_BAD_PERIOD);
	assert_int_equal(parse("cycles@1000", &ev), CP_EV_OK);
	assert_int_equal(parse("cpu-clock@250us", &ev), CP_EV_OK);
	assert_int_equal(ev.period, 250000);
	assert_int_equal(parse("task-clock@2ms", &ev), CP_EV_OK);
	assert_int_equal(ev.period, 2000000);
	assert_int_equal(parse("cpu-clock@1s", &ev), CP_EV_OK);
	assert_int_equal(ev.period, 1000000000);
	assert_int_equal(parse("cpu-clock@5us", &ev), CP_EV_BAD_PERIOD); /* < 10 us */
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
	    cmocka_unit_test(test_names),	   cmocka_unit_test(test_periods),
	    cmocka_unit_test(test_encoding),	   cmocka_unit_test(test_attr),
	    cmocka_unit_test(test_config_metrics),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
