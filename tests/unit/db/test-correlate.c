/* Correlation of hand-built calling context trees with a hand-built structure: frames,
 * loops and inlined frames in order, call sites, merging of threads, unknown code. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "../format/mf-build.h"
#include "db/correlate/correlate.h"
#include "db/db.h"
#include "format/measure-read.h"
#include "format/structure.h"

#include <string.h>

/* Module 0 "app":
 *   main    [0x1000,0x1100): main.c:10 [0x1000,0x1010), main.c:11 [0x1010,0x1100)
 *   compute [0x2000,0x2100): main.c:19 [0x2000,0x2010),
 *     loop main.c:20 (20-25) [0x2010,0x2100): main.c:21 [0x2010,0x2040),
 *       inlined kernel (called at main.c:22, declared kernel.h:5) [0x2040,0x2100):
 *         loop kernel.h:7 (7-8): kernel.h:8 [0x2040,0x2100) */
static void build_structure(struct cp_structure *st)
{
	struct cp_structure_builder b;
	cp_structure_builder_init(&b);
	uint32_t mainc = cp_structure_builder_string(&b, "main.c");
	uint32_t kh = cp_structure_builder_string(&b, "kernel.h");
	struct cp_st_scope s;
#define SCOPE(...)                                                                                 \
	(memset(&s, 0, sizeof s), s = (struct cp_st_scope){__VA_ARGS__},                           \
	 cp_structure_builder_scope(&b, &s))
	uint32_t pmain = SCOPE(.parent = CP_ST_NONE, .kind = CP_ST_PROC,
			       .name = cp_structure_builder_string(&b, "main"), .file = mainc,
			       .line = 9, .addr = 0x1000);
	uint32_t s10 =
	    SCOPE(.parent = pmain, .kind = CP_ST_STMT, .file = mainc, .line = 10, .addr = 0x1000);
	uint32_t s11 =
	    SCOPE(.parent = pmain, .kind = CP_ST_STMT, .file = mainc, .line = 11, .addr = 0x1010);
	uint32_t pcomp = SCOPE(.parent = CP_ST_NONE, .kind = CP_ST_PROC,
			       .name = cp_structure_builder_string(&b, "compute"), .file = mainc,
			       .line = 18, .addr = 0x2000);
	uint32_t s19 =
	    SCOPE(.parent = pcomp, .kind = CP_ST_STMT, .file = mainc, .line = 19, .addr = 0x2000);
	uint32_t l20 = SCOPE(.parent = pcomp, .kind = CP_ST_LOOP, .file = mainc, .line = 20,
			     .line_lo = 20, .line_hi = 25, .addr = 0x2010);
	uint32_t s21 =
	    SCOPE(.parent = l20, .kind = CP_ST_STMT, .file = mainc, .line = 21, .addr = 0x2010);
	uint32_t ik = SCOPE(.parent = l20, .kind = CP_ST_INLINE,
			    .name = cp_structure_builder_string(&b, "kernel"), .file = kh,
			    .line = 5, .aux = mainc, .aux_line = 22, .addr = 0x2040);
	uint32_t l7 = SCOPE(.parent = ik, .kind = CP_ST_LOOP, .file = kh, .line = 7, .line_lo = 7,
			    .line_hi = 8, .addr = 0x2040);
	uint32_t s8 =
	    SCOPE(.parent = l7, .kind = CP_ST_STMT, .file = kh, .line = 8, .addr = 0x2040);
#undef SCOPE
	cp_structure_builder_range(&b, 0x1000, 0x1010, s10);
	cp_structure_builder_range(&b, 0x1010, 0x1100, s11);
	cp_structure_builder_range(&b, 0x2000, 0x2010, s19);
	cp_structure_builder_range(&b, 0x2010, 0x2040, s21);
	cp_structure_builder_range(&b, 0x2040, 0x2100, s8);
	void *buf;
	size_t len;
	assert_int_equal(cp_structure_builder_finish(&b, &buf, &len), 0);
	cp_structure_builder_release(&b);
	assert_int_equal(cp_structure_adopt(st, buf, len, "app.cpst"), 0);
}

static void build_proc(struct cp_mf_proc *p)
{
	static const char *const names[] = {"cputime"};
	struct mfb b;
	mfb_proc(&b, 100, 0, 1, names);
	mfb_module(&b, 0, "/bin/app", 0);
	mfb_module(&b, 1, "/lib/libx.so", 0x7f0000000000);
	mfb_module(&b, 2, "/opt/libcallpath-rt.so", 0x7e0000000000);
	mfb_module(&b, 3, "/bin/app", 0x500000);
	((struct cp_mf_header *)b.buf)->used = b.len;
	assert_int_equal(cp_mf_proc_parse(p, b.buf, b.len, "100.0.proc"), 0);
	free(b.buf);
}

/* weight: value of the kernel statement sample. */
static void build_thread(struct cp_mf_thr *t, const struct cp_mf_proc *p, uint32_t tidx,
			 uint64_t weight)
{
	struct mfb b;
	mfb_thread(&b, 100, 0, tidx, 1);
	uint64_t v;
	uint32_t m = mfb_node(&b, 0, CP_MF_NODE_CALL, 0, 0x1020, NULL); /* in main, line 11 */
	/* (an interposed wrapper of the runtime between main and compute is not in the files:
	 * the runtime leaves its own frames out, src/runtime/core/runtime.h) */
	uint32_t c = mfb_node(&b, m, CP_MF_NODE_CALL, 0, 0x2050, NULL); /* not sampled here */
	(void)c;
	v = weight;
	mfb_node(&b, m, CP_MF_NODE_PC, 0, 0x2045, &v); /* compute: kernel.h:8 */
	v = 10;
	mfb_node(&b, m, CP_MF_NODE_PC, 0, 0x2044, &v); /* same statement, another address */
	v = 7;
	mfb_node(&b, m, CP_MF_NODE_PC, 0, 0x2012, &v); /* main.c:21 in the outer loop */
	/* an interrupted PC under a signal frame is exact (not a return address): 0x2010 is
	 * main.c:21 in the loop, where 0x2010 - 1 would be main.c:19 before it */
	v = 1;
	mfb_node(&b, m, CP_MF_NODE_SIGNAL, 0, 0x2010, &v);
	/* the same module in a later dlopen epoch (module id 3): the same frames */
	v = 2;
	uint32_t e3 = mfb_node(&b, 0, CP_MF_NODE_CALL, 3, 0x1020, NULL);
	mfb_node(&b, e3, CP_MF_NODE_PC, 3, 0x2012, &v);
	/* unknown code: three frames of libx.so collapse into one */
	uint32_t x1 = mfb_node(&b, m, CP_MF_NODE_CALL, 1, 0x500, NULL);
	uint32_t x2 = mfb_node(&b, x1, CP_MF_NODE_CALL, 1, 0x600, NULL);
	v = 5;
	mfb_node(&b, x2, CP_MF_NODE_PC, 1, 0x700, &v);
	/* a partial stack */
	uint32_t part = mfb_node(&b, 0, CP_MF_NODE_PARTIAL, CP_MF_MODULE_NONE, 0, NULL);
	v = 3;
	mfb_node(&b, part, CP_MF_NODE_PC, 0, 0x2001, &v);
	((struct cp_mf_header *)b.buf)->used = b.len;
	assert_int_equal(cp_mf_thr_parse(t, b.buf, b.len, "100.0.x.thr", p), 0);
	free(b.buf);
}

/* The child of parent with this kind and (for frames) procedure name; CP_DB_NONE if none. */
static uint32_t child(const struct cp_db *db, uint32_t parent, int kind, const char *name)
{
	for (uint32_t c = db->scopes[parent].first_child; c != CP_DB_NONE;
	     c = db->scopes[c].next_sibling) {
		const struct cp_db_scope *s = &db->scopes[c];
		if (s->kind != kind)
			continue;
		if (name && strcmp(db->procs[s->proc].name, name))
			continue;
		return c;
	}
	return CP_DB_NONE;
}

static const char *file_of(const struct cp_db *db, uint32_t s)
{
	return db->scopes[s].file == CP_DB_NONE ? "" : db->files[db->scopes[s].file].path;
}

static void test_correlate(void **state)
{
	(void)state;
	struct cp_db db;
	cp_db_init(&db);
	struct cp_corr *c = cp_corr_new(&db);
	struct cp_mf_proc p;
	build_proc(&p);
	uint32_t modmap[4];
	for (size_t i = 0; i < p.nmodules; i++)
		modmap[i] = cp_corr_module(c, p.modules[i].path, p.modules[i].build_id,
					   p.modules[i].build_id_len, 0);
	struct cp_structure st;
	build_structure(&st);
	cp_corr_module_structure(c, modmap[0], &st);
	struct cp_db_metric dm = {.name = "cputime", .unit = "ns"};
	uint32_t metric = cp_db_metric_add(&db, &dm);
	uint32_t metric_map[1] = {metric};
	uint64_t weights[2] = {100, 300};
	for (uint32_t tidx = 0; tidx < 2; tidx++) {
		struct cp_mf_thr t;
		build_thread(&t, &p, tidx, weights[tidx]);
		struct cp_db_profile pr = {
		    .pid = 100, .tid = 100 + (int)tidx, .tidx = tidx, .rank = -1};
		uint32_t prof = cp_db_profile_add(&db, &pr);
		cp_corr_thread(c, &p, modmap, &t, metric_map, prof);
		cp_mf_thr_release(&t);
	}
	struct cp_corr_stats cs;
	cp_corr_stats(c, &cs);
	/* 0x101f, 0x204f, 0x2045, 0x2044, 0x2012, 0x2010, 0x2001 (the second epoch shares
	 * them); libx.so has no structure */
	assert_int_equal(cs.lookups, 7);
	assert_int_equal(cp_db_finish(&db), 0);

	uint32_t fmain = child(&db, 0, CP_DBK_PROC, "main");
	assert_int_not_equal(fmain, CP_DB_NONE);
	uint32_t fcomp = child(&db, fmain, CP_DBK_PROC, "compute");
	assert_int_not_equal(fcomp, CP_DB_NONE);
	assert_string_equal(file_of(&db, fcomp), "main.c"); /* its call site in main */
	assert_int_equal(db.scopes[fcomp].line, 11);
	uint32_t outer = child(&db, fcomp, CP_DBK_LOOP, NULL);
	assert_int_not_equal(outer, CP_DB_NONE);
	assert_int_equal(db.scopes[outer].line, 20);
	assert_int_equal(db.scopes[outer].line_lo, 20);
	assert_int_equal(db.scopes[outer].line_hi, 25);
	uint32_t inl = child(&db, outer, CP_DBK_INLINE, "kernel");
	assert_int_not_equal(inl, CP_DB_NONE);
	assert_string_equal(file_of(&db, inl), "main.c"); /* call site */
	assert_int_equal(db.scopes[inl].line, 22);
	uint32_t inner = child(&db, inl, CP_DBK_LOOP, NULL);
	assert_int_not_equal(inner, CP_DB_NONE);
	assert_int_equal(db.scopes[inner].line, 7);
	assert_string_equal(file_of(&db, inner), "kernel.h");
	uint32_t s8 = child(&db, inner, CP_DBK_STMT, NULL);
	assert_int_not_equal(s8, CP_DB_NONE);
	assert_int_equal(db.scopes[s8].line, 8);
	assert_int_equal(db.scopes[s8].first_child, CP_DB_NONE);
	/* two addresses of one statement in two threads: one scope */
	const struct cp_db_stat *x = cp_db_stat_get(&db, s8, metric, 0);
	assert_true(x->sum == 420.0);
	assert_true(x->max == 310.0 && x->min == 110.0);
	assert_int_equal(x->argmax, 1);
	assert_int_equal(x->count, 2);
	uint32_t s21 = child(&db, outer, CP_DBK_STMT, NULL);
	assert_int_equal(db.scopes[s21].line, 21);
	assert_true(cp_db_stat_get(&db, s21, metric, 0)->sum == 14.0 + 2 + 4); /* +signal, epoch */
	/* inclusive: the outer loop holds both statements */
	assert_true(cp_db_stat_get(&db, outer, metric, 1)->sum == 440.0);
	assert_int_equal(modmap[3], modmap[0]);
	/* compute appears once under main (the un-sampled call 0x2050 leads to the same frame
	 * path but creates no statement) */
	size_t ncompute = 0;
	for (uint32_t k = db.scopes[fmain].first_child; k != CP_DB_NONE;
	     k = db.scopes[k].next_sibling)
		ncompute += db.scopes[k].kind == CP_DBK_PROC &&
			    !strcmp(db.procs[db.scopes[k].proc].name, "compute");
	assert_int_equal(ncompute, 1);
	/* unknown code: one "[libx.so]" frame holding the costs itself */
	uint32_t fx = child(&db, fmain, CP_DBK_PROC, "[libx.so]");
	assert_int_not_equal(fx, CP_DB_NONE);
	assert_int_equal(db.scopes[fx].first_child, CP_DB_NONE);
	assert_true(cp_db_stat_get(&db, fx, metric, 0)->sum == 10.0);
	assert_true(db.procs[db.scopes[fx].proc].flags & CP_DB_PROC_UNKNOWN);
	/* partial stacks under the PARTIAL scope */
	uint32_t part = child(&db, 0, CP_DBK_PARTIAL, NULL);
	assert_int_not_equal(part, CP_DB_NONE);
	assert_true(cp_db_stat_get(&db, part, metric, 1)->sum == 6.0);
	assert_int_not_equal(child(&db, part, CP_DBK_PROC, "compute"), CP_DB_NONE);
	/* nothing counted twice: the root holds every sample once */
	assert_true(cp_db_stat_get(&db, 0, metric, 1)->sum == 420.0 + 14 + 2 + 4 + 10 + 6);

	cp_corr_free(c);
	cp_mf_proc_release(&p);
	cp_db_release(&db);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_correlate),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
