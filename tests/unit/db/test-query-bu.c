/* The bottom-up and flat tables of a database file (db-sqlite-bu.c, db-sqlite-flat.c, read
 * by db/query.h) on a small tree with recursion: main > loop > work > loop > (statement,
 * work > statement). work's frames nest: only the outer one counts in its inclusive value,
 * both in its exclusive value; the values are checked against the scopes' own statistics
 * as cp_db_read gives them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "base/error.h"
#include "db-build.h"
#include "db/db.h"
#include "db/query.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

static char path[64];
static struct cp_db whole, head;
static struct cp_dbq *q;
static struct test_db_ids ids;
static uint32_t sw2, sw2stmt; /* the nested frame of work and its statement */

static int setup(void **state)
{
	struct cp_db db;
	test_db_build(&db, &ids);
	sw2 = test_db_scope(&db, ids.sloop2, CP_DBK_PROC, ids.pwork, ids.mod, ids.fw, 35, 0, 0,
			    0x2000);
	sw2stmt =
	    test_db_scope(&db, sw2, CP_DBK_STMT, ids.pwork, ids.mod, ids.fw, 31, 0, 0, 0x2030);
	cp_db_add(&db, ids.prof[0], sw2stmt, ids.cputime, 7);
	return test_db_write_open(&db, "query-bu", path, sizeof path, &whole, &head, &q);
}

static int teardown(void **state)
{
	test_db_close(path, &whole, &head, q);
	return 0;
}

static double stat(uint32_t scope, int incl)
{
	return cp_db_stat_get(&whole, scope, ids.cputime, incl)->sum;
}

struct procs {
	uint32_t key[8];
	double incl[8], excl[8];
	int callers[8];
	size_t n;
};

static int take_proc(void *ctx, const struct cp_dbq_bu *b)
{
	struct procs *p = ctx;
	assert_true(p->n < 8);
	p->key[p->n] = b->f.key;
	p->incl[p->n] = b->incl[ids.cputime];
	p->excl[p->n] = b->excl[ids.cputime];
	p->callers[p->n++] = b->has_callers;
	return 0;
}

static void test_bottom_up(void **state)
{
	assert_true(cp_dbq_has_bu(q));
	struct procs p = {.n = 0};
	assert_int_equal(cp_dbq_bu_procs(q, CP_DB_NONE, take_proc, &p), 0);
	assert_int_equal(p.n, 2); /* main and work, keyed by their first frames */
	assert_int_equal(p.key[0], ids.smain);
	assert_int_equal(p.key[1], ids.swork);
	assert_false(p.callers[0]);
	assert_true(p.callers[1]);
	assert_true(p.incl[1] == stat(ids.swork, 1)); /* the nested frame is inside it */
	assert_true(p.incl[1] > 0 && stat(sw2, 1) == 7);
	assert_true(p.excl[1] == stat(ids.swork, 0) + stat(sw2, 0));
	struct cp_dbq_frame f;
	assert_int_equal(cp_dbq_bu_frame(q, sw2, &f), 0);
	assert_int_equal(f.key, ids.swork);
	assert_int_equal(f.caller, ids.swork);
	assert_int_equal(f.outer, ids.swork);
	assert_int_equal(cp_dbq_bu_frame(q, ids.sloop2, &f), CP_ENOENT); /* not a frame */
	p.n = 0; /* the outermost frames of work: one, with the nested frame's exclusive value */
	assert_int_equal(cp_dbq_bu_outer(q, ids.swork, take_proc, &p), 0);
	assert_int_equal(p.n, 1);
	assert_true(p.excl[0] == stat(ids.swork, 0) + stat(sw2, 0));
}

struct groups {
	char kind[8][16];
	uint32_t id[8];
	double incl[8], excl[8];
	size_t n;
};

static int take_group(void *ctx, const struct cp_dbq_group *g)
{
	struct groups *s = ctx;
	assert_true(s->n < 8);
	snprintf(s->kind[s->n], sizeof s->kind[0], "%s", g->kind);
	s->id[s->n] = g->id;
	s->incl[s->n] = g->incl[ids.cputime];
	s->excl[s->n++] = g->excl[ids.cputime];
	return 0;
}

static void test_flat(void **state)
{
	assert_true(cp_dbq_has_flat(q));
	struct groups g = {.n = 0};
	assert_int_equal(cp_dbq_flat_groups(q, CP_DB_NONE, 0, CP_DB_NONE, take_group, &g), 0);
	assert_int_equal(g.n, 1); /* the module */
	assert_string_equal(g.kind[0], "module");
	assert_true(g.incl[0] == stat(0, 1) && g.excl[0] == stat(0, 1));
	g.n = 0; /* work is listed under w.c, the file of its first statement */
	assert_int_equal(cp_dbq_flat_groups(q, CP_DB_NONE, CP_DB_NONE, ids.swork, take_group, &g),
			 0);
	assert_int_equal(g.n, 1);
	assert_string_equal(g.kind[0], "procedure");
	/* each sample once; exclusive: work's frames minus the call of the nested one */
	assert_true(g.incl[0] == stat(ids.swork, 1));
	assert_true(g.excl[0] == stat(ids.swork, 1));
	uint32_t work = g.id[0];
	g.n = 0;
	assert_int_equal(cp_dbq_flat_groups(q, work, CP_DB_NONE, CP_DB_NONE, take_group, &g), 0);
	assert_int_equal(g.n, 1);
	assert_int_equal(cp_dbq_flat_groups(q, 999, CP_DB_NONE, CP_DB_NONE, take_group, &g),
			 CP_ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_bottom_up),
	    cmocka_unit_test(test_flat),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
