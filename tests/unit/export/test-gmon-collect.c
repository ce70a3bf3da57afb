/* cp_gmon_from_measurement (callpath gprof's gmon.out) on a hand-built measurement: arcs
 * only between call sites and probed entries both in the executable, the histogram only
 * from the executable's PC nodes, summed over threads and processes, and the rate from
 * the cputime period. */
#include "base/error.h"
#include "export/gmon.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "../format/mf-build.h"

#define APP "/nonexistent/callpath-test/app"
#define LIB "/nonexistent/callpath-test/libx.so"

static char dir[256];

static void put_file(const char *name, struct mfb *b)
{
	mfb_finish(b);
	assert_int_equal(mfb_write(b, dir, name), 0);
	free(b->buf);
}

/* pid: main -> (site 0x1100) probed 0x2000 three times, with 5 ms of cputime at 0x2010
 * under it; a call from the library (site 0x500 of libx) to the probed 0x3000 twice; 7 ms
 * in the library itself. */
static void make_process(int pid)
{
	static const char *const names[] = {"cputime", "calls"};
	struct mfb b;
	mfb_proc(&b, pid, 0, 2, names);
	mfb_module(&b, 0, APP, 0x400000);
	mfb_module(&b, 1, LIB, 0x7f0000000000);
	char name[64];
	snprintf(name, sizeof name, "%d.0.proc", pid);
	put_file(name, &b);
	mfb_thread(&b, pid, 0, 0, 2);
	uint64_t probed[2] = {0, 3}, burn[2] = {5000000, 0}, libcall[2] = {0, 2};
	uint64_t inlib[2] = {7000000, 0};
	uint32_t site = mfb_node(&b, 0, CP_MF_NODE_CALL, 0, 0x1100, NULL);
	uint32_t fn = mfb_node(&b, site, CP_MF_NODE_PC, 0, 0x2000, probed);
	mfb_node(&b, fn, CP_MF_NODE_PC, 0, 0x2010, burn);
	uint32_t libsite = mfb_node(&b, 0, CP_MF_NODE_CALL, 1, 0x500, NULL);
	mfb_node(&b, libsite, CP_MF_NODE_PC, 0, 0x3000, libcall);
	mfb_node(&b, 0, CP_MF_NODE_PC, 1, 0x600, inlib);
	snprintf(name, sizeof name, "%d.0.0.thr", pid);
	put_file(name, &b);
}

static int setup(void **state)
{
	(void)state;
	assert_int_equal(mfb_tmpdir(dir, "cp-test-gmon"), 0);
	make_process(100);
	make_process(101);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	return mfb_rmdir(dir);
}

static double hist_total(const struct cp_gmon *g)
{
	double s = 0;
	for (uint32_t i = 0; i < g->nbins; i++)
		s += g->seconds[i];
	return s;
}

static void test_collect(void **state)
{
	(void)state;
	struct cp_gmon g;
	uint32_t rate = 0;
	assert_int_equal(cp_gmon_from_measurement(&g, dir, APP, &rate), 0);
	assert_int_equal(rate, 1000);	    /* period 1 ms */
	assert_int_equal(g.low_pc, 0x1000); /* the text range as linked (no load bias) */
	assert_true(g.high_pc >= 0x9000);
	/* one arc, both processes' calls; the library's call site gives none */
	assert_int_equal(g.narcs, 1);
	assert_int_equal(g.arcs[0].from_pc, 0x1100);
	assert_int_equal(g.arcs[0].self_pc, 0x2000);
	assert_int_equal(g.arcs[0].count, 6);
	/* 2 x 5 ms at 0x2010; the library's 7 ms are not the executable's */
	assert_float_equal(hist_total(&g), 0.010, 1e-9);
	uint32_t bin = (uint32_t)((0x2010 - g.low_pc) * g.nbins / (g.high_pc - g.low_pc));
	assert_float_equal(g.seconds[bin], 0.010, 1e-9);
	cp_gmon_release(&g);
}

static void test_no_profile(void **state)
{
	(void)state;
	struct cp_gmon g;
	uint32_t rate = 0;
	assert_int_equal(cp_gmon_from_measurement(&g, dir, "/bin/other", &rate), CP_ENOENT);
	assert_non_null(strstr(cp_error_message(), "no profile of /bin/other"));
	cp_gmon_release(&g);
	assert_true(cp_gmon_from_measurement(&g, "/nonexistent/callpath-dir", APP, &rate) < 0);
	cp_gmon_release(&g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_collect),
	    cmocka_unit_test(test_no_profile),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
