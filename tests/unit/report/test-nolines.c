/* Code without line information in every view (issue: the flat view lost the cost of frames
 * and loops that have no statements). A hand-made database of a stripped program:
 *
 *   sub_10 (no file) > loop at [prog+0x20] (own 300) > sub_40 (own 100)
 *                    own 200 outside the loop
 *   <partial call paths> > sub_40 (own 50); and 25 outside any frame
 *
 * Total 675. Every view keeps it all: the frames' costs land on <no line> leaves where
 * they have children, the flat view has a <no source> file, and <partial call paths> is a
 * row of the flat and bottom-up views. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "report/profile.h"
#include "report/render.h"
#include "view-find.h"

#include <math.h>
#include <string.h>

static void build(struct cp_profile *p)
{
	struct cp_db db;
	cp_db_init(&db);
	uint32_t mod = cp_db_module(&db, "/bin/prog", NULL, 0, CP_DB_MOD_EXE);
	struct cp_db_proc pr = {.name = "sub_10", .module = mod, .file = CP_DB_NONE, .entry = 0x10};
	uint32_t p10 = cp_db_proc(&db, &pr);
	pr.name = "sub_40", pr.entry = 0x40;
	uint32_t p40 = cp_db_proc(&db, &pr);
	struct cp_db_scope s = {
	    .kind = CP_DBK_PROC, .proc = p10, .module = mod, .file = CP_DB_NONE, .addr = 0x10};
	uint32_t f10 = cp_db_scope_child(&db, 0, &s);
	s = (struct cp_db_scope){
	    .kind = CP_DBK_LOOP, .proc = p10, .module = mod, .file = CP_DB_NONE, .addr = 0x20};
	uint32_t lp = cp_db_scope_child(&db, f10, &s);
	s = (struct cp_db_scope){
	    .kind = CP_DBK_PROC, .proc = p40, .module = mod, .file = CP_DB_NONE, .addr = 0x40};
	uint32_t f40 = cp_db_scope_child(&db, lp, &s);
	s = (struct cp_db_scope){
	    .kind = CP_DBK_PARTIAL, .proc = CP_DB_NONE, .module = CP_DB_NONE, .file = CP_DB_NONE};
	uint32_t part = cp_db_scope_child(&db, 0, &s);
	s = (struct cp_db_scope){
	    .kind = CP_DBK_PROC, .proc = p40, .module = mod, .file = CP_DB_NONE, .addr = 0x40};
	uint32_t pf40 = cp_db_scope_child(&db, part, &s);
	struct cp_db_metric m = {.name = "cputime", .unit = "ns", .period = 1};
	uint32_t cpu = cp_db_metric_add(&db, &m);
	struct cp_db_profile prof = {.pid = 1, .tid = 1, .rank = -1};
	uint32_t id = cp_db_profile_add(&db, &prof);
	cp_db_add(&db, id, f10, cpu, 200);
	cp_db_add(&db, id, lp, cpu, 300);
	cp_db_add(&db, id, f40, cpu, 100);
	cp_db_add(&db, id, part, cpu, 25);
	cp_db_add(&db, id, pf40, cpu, 50);
	assert_int_equal(cp_db_finish(&db), 0);
	assert_int_equal(cp_profile_from_db(p, &db, "stripped", CP_PROFILE_ALL_THREADS, 0, NULL, 0),
			 0);
}

static size_t nchildren(const struct cp_view *v, uint32_t node)
{
	size_t n = 0;
	for (uint32_t c = v->nodes[node].first_child; c != UINT32_MAX; c = v->nodes[c].next_sibling)
		n++;
	return n;
}

static double excl(const struct cp_view *v, uint32_t x)
{
	return cp_view_excl(v, x)[0];
}

static double incl(const struct cp_view *v, uint32_t x)
{
	return cp_view_incl(v, x)[0];
}

static void test_top_down_leaves(void **state)
{
	(void)state;
	struct cp_profile p;
	build(&p);
	const struct cp_view *v = &p.td;
	assert_true(incl(v, 0) == 675);
	uint32_t f = child_named(v, 0, "sub_10"), l = child_named(v, f, "loop at [prog+0x20]");
	assert_true(incl(v, child_named(v, f, CP_VIEW_NO_LINE)) == 200);
	assert_true(incl(v, child_named(v, l, CP_VIEW_NO_LINE)) == 300);
	assert_true(excl(v, f) == 500 && excl(v, l) == 300 && incl(v, f) == 600);
	uint32_t part = child_named(v, 0, CP_VIEW_PARTIAL);
	assert_true(excl(v, part) == 25 && incl(v, part) == 75);
	/* a frame without children keeps its cost: no leaf */
	assert_int_equal(nchildren(v, child_named(v, l, "sub_40")), 0);
	cp_profile_release(&p);
}

static void test_flat(void **state)
{
	(void)state;
	struct cp_profile p;
	build(&p);
	struct cp_view fl;
	cp_profile_view(&p, CP_VIEW_FLAT, CP_DB_STAT_SUM, NULL, &fl);
	uint32_t mod = child_named(&fl, 0, "/bin/prog"),
		 file = child_named(&fl, mod, CP_VIEW_NO_SOURCE);
	assert_true(excl(&fl, mod) == 650 && incl(&fl, mod) == 650 && excl(&fl, file) == 650);
	uint32_t f10 = child_named(&fl, file, "sub_10"), f40 = child_named(&fl, file, "sub_40");
	assert_true(excl(&fl, f10) == 500 && incl(&fl, f10) == 600);
	assert_true(excl(&fl, f40) == 150 && incl(&fl, f40) == 150);
	assert_int_equal(nchildren(&fl, f40), 0); /* no lone <no line> */
	uint32_t l = child_named(&fl, f10, "loop at [prog+0x20]");
	assert_true(excl(&fl, l) == 300 && incl(&fl, l) == 400);
	assert_true(excl(&fl, child_named(&fl, f10, CP_VIEW_NO_LINE)) == 200);
	uint32_t part = child_named(&fl, 0, CP_VIEW_PARTIAL);
	assert_true(excl(&fl, part) == 25);
	cp_view_release(&fl);
	cp_profile_release(&p);
}

static void test_bottom_up(void **state)
{
	(void)state;
	struct cp_profile p;
	build(&p);
	struct cp_view bu;
	cp_profile_view(&p, CP_VIEW_BOTTOM_UP, CP_DB_STAT_SUM, NULL, &bu);
	double sum = 0;
	for (uint32_t c = bu.nodes[0].first_child; c != UINT32_MAX; c = bu.nodes[c].next_sibling)
		sum += excl(&bu, c);
	assert_true(sum == 675);
	uint32_t f40 = child_named(&bu, 0, "sub_40");
	/* its callers hold all of its cost: sub_10 and the unknown ones */
	assert_true(excl(&bu, child_named(&bu, f40, "sub_10")) == 100);
	assert_true(excl(&bu, child_named(&bu, f40, CP_VIEW_PARTIAL)) == 50);
	assert_true(excl(&bu, child_named(&bu, 0, CP_VIEW_PARTIAL)) == 25);
	cp_view_release(&bu);
	cp_profile_release(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_top_down_leaves),
	    cmocka_unit_test(test_flat),
	    cmocka_unit_test(test_bottom_up),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
