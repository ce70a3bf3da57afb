/* The flat view files a procedure under the same source file whichever threads are
 * selected: work() has statements in two files, work.c (cost in thread 0 only) and
 * macros.h (thread 1 only). The file is chosen from the whole tree, so thread 1's flat
 * view files work() under work.c too, like the view of all threads, and thread 1's rows
 * are a part of the all-threads rows (report --thread against the sum, and the viewer's
 * per-thread values, add up). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "report/profile.h"
#include "report/render.h"
#include "view-find.h"

#include <string.h>

static void build(struct cp_profile *p, int thread)
{
	struct cp_db db;
	cp_db_init(&db);
	uint32_t mod = cp_db_module(&db, "/bin/prog", NULL, 0, CP_DB_MOD_EXE);
	uint32_t work_c = cp_db_file(&db, "work.c"), macros_h = cp_db_file(&db, "macros.h");
	struct cp_db_proc pr = {.name = "work", .module = mod, .file = work_c, .entry = 0x10};
	uint32_t pw = cp_db_proc(&db, &pr);
	struct cp_db_scope s = {
	    .kind = CP_DBK_PROC, .proc = pw, .module = mod, .file = CP_DB_NONE, .addr = 0x10};
	uint32_t fw = cp_db_scope_child(&db, 0, &s);
	s = (struct cp_db_scope){.kind = CP_DBK_STMT,
				 .proc = pw,
				 .module = mod,
				 .file = work_c,
				 .line = 10,
				 .addr = 0x14};
	uint32_t st_c = cp_db_scope_child(&db, fw, &s);
	s = (struct cp_db_scope){.kind = CP_DBK_STMT,
				 .proc = pw,
				 .module = mod,
				 .file = macros_h,
				 .line = 20,
				 .addr = 0x18};
	uint32_t st_h = cp_db_scope_child(&db, fw, &s);
	struct cp_db_metric m = {.name = "cputime", .unit = "ns", .period = 1};
	uint32_t cpu = cp_db_metric_add(&db, &m);
	struct cp_db_profile prof = {.pid = 1, .tid = 1, .tidx = 0, .rank = -1};
	uint32_t t0 = cp_db_profile_add(&db, &prof);
	prof.tid = 2, prof.tidx = 1;
	uint32_t t1 = cp_db_profile_add(&db, &prof);
	cp_db_add(&db, t0, st_c, cpu, 300);
	cp_db_add(&db, t1, st_h, cpu, 100);
	assert_int_equal(cp_db_finish(&db), 0);
	assert_int_equal(cp_profile_from_db(p, &db, "flatfile", thread, 0, NULL, 0), 0);
}

/* work()'s exclusive value in the flat view, under /bin/prog > FILE; FILE must be there. */
static double work_under(int thread, const char *file)
{
	struct cp_profile p;
	struct cp_view fl;
	build(&p, thread);
	cp_profile_view(&p, CP_VIEW_FLAT, CP_DB_STAT_SUM, NULL, &fl);
	uint32_t mod = child_named(&fl, 0, "/bin/prog");
	uint32_t f = child_named(&fl, mod, file);
	double v = cp_view_incl(&fl, child_named(&fl, f, "work"))[0];
	cp_view_release(&fl);
	cp_profile_release(&p);
	return v;
}

static void test_same_file(void **state)
{
	(void)state;
	assert_true(work_under(CP_PROFILE_ALL_THREADS, "work.c") == 400);
	assert_true(work_under(0, "work.c") == 300);
	assert_true(work_under(1, "work.c") == 100); /* not under macros.h */
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(test_same_file)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
