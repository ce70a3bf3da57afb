/* The in-memory profile database (db.h): interning and scope identity, inclusive and
 * exclusive values, summary statistics over profiles, per-profile dense values. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "db-build.h"
#include "db/db.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void test_intern(void **state)
{
	struct cp_db db;
	cp_db_init(&db);
	char buf[16];
	strcpy(buf, "hello");
	const char *a = cp_db_intern(&db, buf);
	strcpy(buf, "world");
	const char *b = cp_db_intern(&db, buf);
	assert_string_equal(a, "hello");
	assert_string_equal(b, "world");
	assert_ptr_equal(cp_db_intern(&db, "hello"), a);
	assert_null(cp_db_intern(&db, NULL));
	/* many strings: the table grows, pointers stay valid */
	const char *keep[5000];
	for (int i = 0; i < 5000; i++) {
		snprintf(buf, sizeof buf, "s%d", i);
		keep[i] = cp_db_intern(&db, buf);
	}
	for (int i = 0; i < 5000; i++) {
		snprintf(buf, sizeof buf, "s%d", i);
		assert_string_equal(keep[i], buf);
		assert_ptr_equal(cp_db_intern(&db, buf), keep[i]);
	}
	cp_db_release(&db);
}

static void test_modules_files_procs(void **state)
{
	struct cp_db db;
	cp_db_init(&db);
	uint8_t b1[3] = {1, 2, 3}, b2[3] = {1, 2, 4};
	uint32_t m1 = cp_db_module(&db, "/usr/lib/libc.so.6", b1, 3, 0);
	uint32_t m2 = cp_db_module(&db, "/usr/lib/libc.so.6", b2, 3, 0);
	uint32_t m3 = cp_db_module(&db, "/usr/lib/libc.so.6", b1, 3, CP_DB_MOD_EXE);
	assert_int_equal(m1, 0);
	assert_int_equal(m2, 1); /* another build-id is another module */
	assert_int_equal(m3, m1);
	assert_int_equal(db.modules[m1].flags, CP_DB_MOD_EXE);
	assert_string_equal(db.modules[m1].name, "libc.so.6");
	assert_int_equal(db.modules[m1].build_id_len, 3);
	assert_int_equal(cp_db_module(&db, "[vdso]", NULL, 0, 0), 2);
	assert_string_equal(db.modules[2].name, "[vdso]");

	assert_int_equal(cp_db_file(&db, "/a.c"), 0);
	assert_int_equal(cp_db_file(&db, "/b.c"), 1);
	assert_int_equal(cp_db_file(&db, "/a.c"), 0);
	assert_int_equal(cp_db_file(&db, NULL), CP_DB_NONE);

	struct cp_db_proc p = {.name = "f", .module = m1, .file = 0, .line = 3, .entry = 0x10};
	uint32_t f = cp_db_proc(&db, &p);
	p.line = 99; /* not part of the identity */
	assert_int_equal(cp_db_proc(&db, &p), f);
	p.entry = 0x20;
	assert_int_not_equal(cp_db_proc(&db, &p), f);
	p.entry = 0x10;
	p.module = m2;
	assert_int_not_equal(cp_db_proc(&db, &p), f);
	p.module = m1;
	p.name = "g";
	assert_int_not_equal(cp_db_proc(&db, &p), f);
	assert_int_equal(db.nprocs, 4);
	assert_int_equal(db.procs[f].line, 3);
	cp_db_release(&db);
}

static void test_scope_identity(void **state)
{
	struct cp_db db;
	cp_db_init(&db);
	assert_int_equal(db.nscopes, 1);
	assert_int_equal(db.scopes[0].kind, CP_DBK_ROOT);
	assert_int_equal(db.scopes[0].parent, CP_DB_NONE);
	uint32_t f = 0, g = 1;
	/* PROC / INLINE: (proc, file, line) */
	uint32_t a = test_db_scope(&db, 0, CP_DBK_PROC, f, 0, 0, 10, 0, 0, 0x100);
	assert_int_equal(test_db_scope(&db, 0, CP_DBK_PROC, f, 0, 0, 10, 0, 0, 0x999), a);
	uint32_t a2 = test_db_scope(&db, 0, CP_DBK_PROC, f, 0, 0, 11, 0, 0, 0x100);
	assert_int_not_equal(a2, a); /* another call site is another frame */
	assert_int_not_equal(test_db_scope(&db, 0, CP_DBK_PROC, f, 0, 1, 10, 0, 0, 0x100), a);
	assert_int_not_equal(test_db_scope(&db, 0, CP_DBK_PROC, g, 0, 0, 10, 0, 0, 0x100), a);
	uint32_t in = test_db_scope(&db, a, CP_DBK_INLINE, f, 0, 0, 10, 0, 0, 0x100);
	assert_int_not_equal(in, a);
	assert_int_not_equal(test_db_scope(&db, a, CP_DBK_PROC, f, 0, 0, 10, 0, 0, 0x100), in);
	assert_int_equal(test_db_scope(&db, a, CP_DBK_INLINE, f, 0, 0, 10, 0, 0, 0x104), in);
	/* the same identity under another parent is another scope */
	assert_int_not_equal(test_db_scope(&db, a2, CP_DBK_INLINE, f, 0, 0, 10, 0, 0, 0x100), in);
	/* LOOP: (module, addr) */
	uint32_t l = test_db_scope(&db, in, CP_DBK_LOOP, f, 0, 0, 20, 20, 30, 0x200);
	assert_int_equal(test_db_scope(&db, in, CP_DBK_LOOP, f, 0, 1, 21, 0, 0, 0x200), l);
	assert_int_not_equal(test_db_scope(&db, in, CP_DBK_LOOP, f, 1, 0, 20, 20, 30, 0x200), l);
	assert_int_not_equal(test_db_scope(&db, in, CP_DBK_LOOP, f, 0, 0, 20, 20, 30, 0x204), l);
	assert_int_equal(db.scopes[l].line_lo, 20);
	assert_int_equal(db.scopes[l].line_hi, 30);
	/* STMT: (file, line); the first address is kept */
	uint32_t s = test_db_scope(&db, l, CP_DBK_STMT, f, 0, 0, 25, 0, 0, 0x210);
	assert_int_equal(test_db_scope(&db, l, CP_DBK_STMT, f, 0, 0, 25, 0, 0, 0x218), s);
	assert_int_equal(db.scopes[s].addr, 0x210);
	assert_int_not_equal(test_db_scope(&db, l, CP_DBK_STMT, f, 0, 0, 26, 0, 0, 0x210), s);
	/* PARTIAL: one per parent */
	uint32_t p =
	    test_db_scope(&db, 0, CP_DBK_PARTIAL, CP_DB_NONE, CP_DB_NONE, CP_DB_NONE, 0, 0, 0, 0);
	assert_int_equal(test_db_scope(&db, 0, CP_DBK_PARTIAL, 5, 5, 5, 5, 0, 0, 5), p);
	/* bad requests */
	assert_int_equal(test_db_scope(&db, 0, CP_DBK_ROOT, 0, 0, 0, 0, 0, 0, 0), CP_DB_NONE);
	assert_int_equal(test_db_scope(&db, 12345, CP_DBK_STMT, 0, 0, 0, 1, 0, 0, 0), CP_DB_NONE);
	/* structure: depth, children in creation order, children after parents */
	assert_int_equal(db.scopes[s].depth, 4);
	assert_int_equal(db.scopes[s].parent, l);
	assert_int_equal(db.scopes[0].first_child, a);
	assert_int_equal(db.scopes[a].next_sibling, a2);
	size_t nroot = 0;
	for (uint32_t c = db.scopes[0].first_child; c != CP_DB_NONE; c = db.scopes[c].next_sibling)
		nroot++;
	assert_int_equal(nroot, 5); /* a, a2, (f, file 1), (g), partial */
	for (size_t i = 1; i < db.nscopes; i++)
		assert_true(db.scopes[i].parent < i);
	cp_db_release(&db);
}

static void test_scope_many(void **state)
{
	/* a wide and deep tree: every lookup finds what was created */
	struct cp_db db;
	cp_db_init(&db);
	uint32_t ids[200][50];
	for (int round = 0; round < 2; round++) {
		for (uint32_t i = 0; i < 200; i++) {
			uint32_t parent = 0;
			for (uint32_t d = 0; d < 50; d++) {
				uint32_t id =
				    test_db_scope(&db, parent, CP_DBK_PROC, d, 0, 0, i, 0, 0, 0);
				if (round)
					assert_int_equal(id, ids[i][d]);
				ids[i][d] = id;
				parent = id;
			}
		}
	}
	assert_int_equal(db.nscopes, 1 + 200 * 50);
	cp_db_release(&db);
}

static void test_incl_excl(void **state)
{
	struct cp_db db;
	struct test_db_ids t;
	test_db_build(&db, &t);
	assert_int_equal(cp_db_nraw(&db), 2);
	assert_int_equal(cp_db_finish(&db), 0);
	assert_true(db.finished);
	assert_int_equal(db.pvalues[1].n, 2); /* merged */
	assert_true(db.pvalues[1].sorted);
	const struct cp_db_stat *st;
	/* exclusive: the scope's own code, up to its procedure frame (calls excluded) */
	assert_true(cp_db_stat_get(&db, t.sloop2, t.cputime, 0)->sum == 40);
	assert_true(cp_db_stat_get(&db, t.swork, t.cputime, 0)->sum == 40);
	assert_int_equal(cp_db_stat_get(&db, t.sloop1, t.cputime, 0)->count, 0); /* a call */
	assert_int_equal(cp_db_stat_get(&db, t.sloop1, t.cputime, 0)->argmax, CP_DB_NONE);
	assert_true(cp_db_stat_get(&db, t.smain, t.cputime, 0)->sum == 2);
	assert_int_equal(cp_db_stat_get(&db, 0, t.cputime, 0)->count, 0);
	st = cp_db_stat_get(&db, t.sstmt, t.cputime, 0);
	assert_true(st->sum == 40);
	st = cp_db_stat_get(&db, t.smstmt, t.cputime, 0);
	assert_true(st->sum == 2);
	/* inclusive: subtree sums */
	assert_true(cp_db_stat_get(&db, t.sloop2, t.cputime, 1)->sum == 40);
	assert_true(cp_db_stat_get(&db, t.swork, t.cputime, 1)->sum == 40);
	assert_true(cp_db_stat_get(&db, t.sloop1, t.cputime, 1)->sum == 40);
	assert_true(cp_db_stat_get(&db, t.smain, t.cputime, 1)->sum == 42);
	assert_true(cp_db_stat_get(&db, 0, t.cputime, 1)->sum == 42);
	assert_true(cp_db_stat_get(&db, 0, t.cycles, 1)->sum == 80);
	assert_int_equal(cp_db_stat_get(&db, 0, t.cputime, 1)->count, 3);
	assert_int_equal(cp_db_stat_get(&db, 0, t.cycles, 1)->count, 2);
	assert_true(cp_db_stat_get(&db, t.smstmt, t.cycles, 1)->sum == 0);
	/* samples summed from the profiles */
	assert_int_equal(db.metrics[t.cputime].samples, 42);
	assert_int_equal(db.metrics[t.cycles].samples, 0);
	/* idempotent */
	assert_int_equal(cp_db_finish(&db), 0);
	assert_true(cp_db_stat_get(&db, 0, t.cputime, 1)->sum == 42);
	/* adding after finish: finish again recomputes */
	cp_db_add(&db, t.prof[0], t.smstmt, t.cputime, 8);
	assert_false(db.finished);
	cp_db_finish(&db);
	assert_true(cp_db_stat_get(&db, 0, t.cputime, 1)->sum == 50);
	cp_db_release(&db);
}

static void test_stats(void **state)
{
	struct cp_db db;
	struct test_db_ids t;
	test_db_build(&db, &t);
	cp_db_finish(&db);
	/* profile 1 does 3x the work of profile 2; the main thread never runs work() */
	for (int incl = 0; incl < 2; incl++) {
		const struct cp_db_stat *st =
		    cp_db_stat_get(&db, incl ? t.swork : t.sstmt, t.cputime, incl);
		assert_int_equal(st->count, 2);
		assert_true(st->sum == 40);
		assert_true(st->max == 30);
		assert_true(st->min == 10);
		assert_true(st->max / st->min == 3);
		assert_int_equal(st->argmax, t.prof[1]);
		assert_true(fabs(st->mean - 20) < 1e-9);
		assert_true(fabs(st->stddev - 10) < 1e-9); /* population */
		assert_true(cp_db_stat_value(st, CP_DB_STAT_MAX) == 30);
	}
	/* the root over 3 profiles: 2, 30, 10 */
	const struct cp_db_stat *st = cp_db_stat_get(&db, 0, t.cputime, 1);
	assert_true(st->min == 2);
	assert_true(st->max == 30);
	double mean = 42.0 / 3, var = ((2 - mean) * (2 - mean) + (30 - mean) * (30 - mean) +
				       (10 - mean) * (10 - mean)) /
				      3;
	assert_true(fabs(st->mean - mean) < 1e-9);
	assert_true(fabs(st->stddev - sqrt(var)) < 1e-9);
	/* one profile: stddev 0 */
	st = cp_db_stat_get(&db, t.smstmt, t.cputime, 0);
	assert_int_equal(st->count, 1);
	assert_true(st->stddev == 0);
	assert_int_equal(st->argmax, t.prof[0]);
	assert_int_equal(cp_db_stat_parse("stddev"), CP_DB_STAT_STDDEV);
	assert_int_equal(cp_db_stat_parse("median"), -1);
	cp_db_release(&db);
}

static void test_recursion(void **state)
{
	/* main -> f -> f -> f: a sample in the innermost f counts once at each frame */
	struct cp_db db;
	cp_db_init(&db);
	struct cp_db_metric m = {.name = "cputime", .unit = "ns"};
	uint32_t met = cp_db_metric_add(&db, &m);
	struct cp_db_profile pr = {.rank = -1};
	uint32_t p = cp_db_profile_add(&db, &pr);
	uint32_t s0 = test_db_scope(&db, 0, CP_DBK_PROC, 0, 0, 0, 1, 0, 0, 0);
	uint32_t s1 = test_db_scope(&db, s0, CP_DBK_PROC, 1, 0, 0, 2, 0, 0, 0);
	uint32_t s2 = test_db_scope(&db, s1, CP_DBK_PROC, 1, 0, 0, 3, 0, 0, 0);
	uint32_t s3 = test_db_scope(&db, s2, CP_DBK_PROC, 1, 0, 0, 3, 0, 0, 0);
	cp_db_add(&db, p, s3, met, 7);
	cp_db_add(&db, p, s1, met, 1);
	cp_db_finish(&db);
	assert_true(cp_db_stat_get(&db, s3, met, 1)->sum == 7);
	assert_true(cp_db_stat_get(&db, s2, met, 1)->sum == 7);
	assert_true(cp_db_stat_get(&db, s1, met, 1)->sum == 8);
	assert_true(cp_db_stat_get(&db, 0, met, 1)->sum == 8);
	cp_db_release(&db);
}

static void test_empty(void **state)
{
	struct cp_db db;
	cp_db_init(&db);
	assert_int_equal(cp_db_finish(&db), 0);
	assert_int_equal(db.nscopes, 1);
	assert_int_equal(db.nmetrics, 0);
	assert_int_equal(cp_db_nraw(&db), 0);
	assert_int_equal(cp_db_metric_find(&db, "cputime"), CP_DB_NONE);
	cp_db_release(&db);
	/* metrics and profiles but no values */
	cp_db_init(&db);
	struct cp_db_metric m = {.name = "cputime", .unit = "ns"};
	cp_db_metric_add(&db, &m);
	struct cp_db_profile pr = {.rank = -1};
	cp_db_profile_add(&db, &pr);
	cp_db_finish(&db);
	const struct cp_db_stat *st = cp_db_stat_get(&db, 0, 0, 1);
	assert_int_equal(st->count, 0);
	assert_true(st->sum == 0 && st->max == 0 && st->min == 0);
	assert_int_equal(st->argmax, CP_DB_NONE);
	double ex[1], in[1];
	cp_db_profile_dense(&db, 0, ex, in);
	assert_true(ex[0] == 0 && in[0] == 0);
	cp_db_release(&db);
}

static void test_metrics(void **state)
{
	struct cp_db db;
	cp_db_init(&db);
	struct cp_db_metric m = {
	    .name = "cputime", .unit = "ns", .kind = CP_DB_METRIC_DERIVED, .formula = "x"};
	uint32_t a = cp_db_metric_add(&db, &m);
	assert_int_equal(a, 0);
	assert_int_equal(db.metrics[a].kind, CP_DB_METRIC_RAW);
	assert_null(db.metrics[a].formula);
	assert_int_equal(cp_db_metric_add(&db, &m), a); /* same name: same metric */
	m.name = "cycles";
	assert_int_equal(cp_db_metric_add(&db, &m), 1);
	assert_int_equal(cp_db_metric_find(&db, "cycles"), 1);
	assert_int_equal(cp_db_derived_add(&db, "cpc", "cycles/cputime", "", NULL), 2);
	m.name = "instructions"; /* raw after derived: refused */
	assert_int_equal(cp_db_metric_add(&db, &m), CP_DB_NONE);
	assert_int_equal(cp_db_nraw(&db), 2);
	cp_db_release(&db);
	/* at most CP_DB_MAX_METRICS raw metrics */
	cp_db_init(&db);
	char name[32];
	for (int i = 0; i < CP_DB_MAX_METRICS; i++) {
		snprintf(name, sizeof name, "m%d", i);
		m.name = name;
		assert_int_equal(cp_db_metric_add(&db, &m), i);
	}
	m.name = "one-more";
	assert_int_equal(cp_db_metric_add(&db, &m), CP_DB_NONE);
	cp_db_release(&db);
}

static void test_dense(void **state)
{
	struct cp_db db;
	struct test_db_ids t;
	test_db_build(&db, &t);
	cp_db_finish(&db);
	size_t n = db.nscopes * 2;
	double *ex = calloc(n, sizeof *ex), *in = calloc(n, sizeof *in);
	cp_db_profile_dense(&db, t.prof[1], ex, in);
	assert_true(ex[t.sstmt * 2 + t.cputime] == 30);
	assert_true(ex[t.sstmt * 2 + t.cycles] == 60);
	assert_true(ex[t.swork * 2 + t.cputime] == 0);
	assert_true(in[t.swork * 2 + t.cputime] == 30);
	assert_true(in[0 * 2 + t.cycles] == 60);
	assert_true(in[t.smstmt * 2 + t.cputime] == 0);
	cp_db_profile_dense(&db, t.prof[0], ex, NULL);
	assert_true(ex[t.smstmt * 2 + t.cputime] == 2);
	assert_true(ex[t.sstmt * 2 + t.cputime] == 0);
	free(ex);
	free(in);
	cp_db_release(&db);
}

static void test_bad_adds_ignored(void **state)
{
	struct cp_db db;
	struct test_db_ids t;
	test_db_build(&db, &t);
	cp_db_add(&db, 99, t.sstmt, t.cputime, 1);
	cp_db_add(&db, 0, 9999, t.cputime, 1);
	cp_db_add(&db, 0, t.sstmt, 7, 1);
	cp_db_add(&db, 0, t.sstmt, t.cputime, 0);
	cp_db_finish(&db);
	assert_true(cp_db_stat_get(&db, 0, t.cputime, 1)->sum == 42);
	cp_db_release(&db);
}

static void test_notes(void **state)
{
	struct cp_db db;
	cp_db_init(&db);
	cp_db_note_add(&db, "a note");
	cp_db_note_add(&db, "a note");
	cp_db_note_add(&db, "another");
	cp_db_warning_add(&db, "missing module");
	assert_int_equal(db.run.nnotes, 2);
	assert_int_equal(db.run.nwarnings, 1);
	assert_string_equal(db.run.notes[1], "another");
	cp_db_release(&db);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_intern),	     cmocka_unit_test(test_modules_files_procs),
	    cmocka_unit_test(test_scope_identity),   cmocka_unit_test(test_scope_many),
	    cmocka_unit_test(test_incl_excl),	     cmocka_unit_test(test_stats),
	    cmocka_unit_test(test_recursion),	     cmocka_unit_test(test_empty),
	    cmocka_unit_test(test_metrics),	     cmocka_unit_test(test_dense),
	    cmocka_unit_test(test_bad_adds_ignored), cmocka_unit_test(test_notes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
