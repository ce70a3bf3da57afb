/* cp_db_merge and cp_db_pack/unpack (db.h): the databases of consecutive pieces of a
 * producer's work, merged in order (as a chain or as a tree, through their packed bytes),
 * are the database of the whole work, id for id and bit for bit after cp_db_finish. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "base/error.h"
#include "base/strbuf.h"
#include "db/db.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng;
static uint32_t rnd(uint32_t n)
{
	rng = rng * 6364136223846793005ull + 1442695040888963407ull;
	return (uint32_t)(rng >> 33) % n;
}

/* Profile k of the work, as a correlator would produce it: paths of procedure frames,
 * loops and statements over a small program, values in path order (repeats included). */
static void produce_profile(struct cp_db *db, uint32_t k)
{
	rng = 0x9e3779b97f4a7c15ull ^ (k * 0x100000001b3ull);
	uint32_t mod = cp_db_module(db, "/bin/app", (const uint8_t *)"\1\2", 2, CP_DB_MOD_EXE);
	struct cp_db_metric m = {.name = k % 2 ? "cycles" : "cputime", .unit = "ns"};
	uint32_t metric = cp_db_metric_add(db, &m);
	struct cp_db_profile p = {.pid = 100 + (int)k / 2, .tid = (int)k, .rank = -1};
	p.samples[metric] = k + 1;
	uint32_t prof = cp_db_profile_add(db, &p);
	uint32_t leaves[40];
	for (int path = 0; path < 40; path++) {
		uint32_t at = 0, depth = 1 + rnd(6);
		for (uint32_t d = 0; d < depth; d++) {
			char name[16], file[16];
			snprintf(name, sizeof name, "f%u", rnd(12));
			snprintf(file, sizeof file, "src%u.c", rnd(3));
			struct cp_db_proc pr = {.name = name, .module = mod, .entry = rnd(12) * 16};
			pr.file = cp_db_file(db, file);
			struct cp_db_scope s = {.kind = CP_DBK_PROC, .module = mod};
			s.proc = cp_db_proc(db, &pr);
			s.file = pr.file;
			s.line = rnd(50);
			at = cp_db_scope_child(db, at, &s);
			if (rnd(3) == 0) {
				struct cp_db_scope l = {
				    .kind = CP_DBK_LOOP, .module = mod, .file = CP_DB_NONE};
				l.proc = s.proc;
				l.addr = rnd(4) * 64;
				at = cp_db_scope_child(db, at, &l);
			}
		}
		struct cp_db_scope st = {.kind = CP_DBK_STMT, .module = mod, .line = rnd(30)};
		st.proc = db->scopes[at].proc;
		st.file = cp_db_file(db, "src0.c");
		leaves[path] = cp_db_scope_child(db, at, &st);
	}
	/* values out of scope order, some scopes twice (not consecutively) */
	for (int i = 0; i < 60; i++)
		cp_db_add(db, prof, leaves[(i * 7) % 40], metric, 1 + rnd(1000) * 0.37);
	char note[32];
	snprintf(note, sizeof note, "note %u", k % 3);
	cp_db_warning_add(db, note);
}

static void produce(struct cp_db *db, uint32_t lo, uint32_t hi)
{
	cp_db_init(db);
	for (uint32_t k = lo; k < hi; k++)
		produce_profile(db, k);
}

/* src through its packed bytes: what a rank receives. */
static void repack(struct cp_db *db)
{
	struct strbuf sb;
	strbuf_init(&sb);
	cp_db_pack(db, &sb);
	cp_db_release(db);
	assert_int_equal(cp_db_unpack(db, sb.buf, sb.len), 0);
	strbuf_release(&sb);
}

static void assert_same(struct cp_db *a, struct cp_db *b)
{
	assert_int_equal(cp_db_finish(a), 0);
	assert_int_equal(cp_db_finish(b), 0);
	assert_int_equal(a->nmodules, b->nmodules);
	assert_int_equal(a->nfiles, b->nfiles);
	assert_int_equal(a->nprocs, b->nprocs);
	assert_int_equal(a->nscopes, b->nscopes);
	assert_int_equal(a->nmetrics, b->nmetrics);
	assert_int_equal(a->nprofiles, b->nprofiles);
	assert_int_equal(a->run.nwarnings, b->run.nwarnings);
	for (size_t i = 0; i < a->nfiles; i++)
		assert_string_equal(a->files[i].path, b->files[i].path);
	for (size_t i = 0; i < a->nprocs; i++) {
		assert_string_equal(a->procs[i].name, b->procs[i].name);
		assert_int_equal(a->procs[i].file, b->procs[i].file);
	}
	assert_memory_equal(a->scopes, b->scopes, a->nscopes * sizeof *a->scopes);
	for (size_t i = 0; i < a->nprofiles; i++) {
		assert_int_equal(a->profiles[i].tid, b->profiles[i].tid);
		assert_memory_equal(a->profiles[i].samples, b->profiles[i].samples,
				    sizeof a->profiles[i].samples);
		assert_int_equal(a->pvalues[i].n, b->pvalues[i].n);
		assert_memory_equal(a->pvalues[i].v, b->pvalues[i].v,
				    a->pvalues[i].n * sizeof *a->pvalues[i].v);
	}
	assert_memory_equal(a->stats, b->stats, a->nscopes * a->nmetrics * 2 * sizeof *a->stats);
	for (size_t i = 0; i < a->run.nwarnings; i++)
		assert_string_equal(a->run.warnings[i], b->run.warnings[i]);
}

static void test_chain(void **state)
{
	struct cp_db whole, a, b, c;
	produce(&whole, 0, 9);
	produce(&a, 0, 3);
	produce(&b, 3, 7);
	produce(&c, 7, 9);
	assert_int_equal(cp_db_merge(&a, &b), 0);
	assert_int_equal(cp_db_merge(&a, &c), 0);
	assert_true(a.nscopes > 100);
	assert_same(&whole, &a);
	cp_db_release(&whole);
	cp_db_release(&a);
	cp_db_release(&b);
	cp_db_release(&c);
}

/* A binomial tree's order: (a + b) + (c + d), every piece sent packed. */
static void test_tree_packed(void **state)
{
	struct cp_db whole, p[4];
	produce(&whole, 0, 11);
	uint32_t cut[5] = {0, 2, 6, 7, 11};
	for (int i = 0; i < 4; i++) {
		produce(&p[i], cut[i], cut[i + 1]);
		repack(&p[i]);
	}
	assert_int_equal(cp_db_merge(&p[2], &p[3]), 0);
	repack(&p[2]);
	assert_int_equal(cp_db_merge(&p[0], &p[1]), 0);
	assert_int_equal(cp_db_merge(&p[0], &p[2]), 0);
	assert_same(&whole, &p[0]);
	cp_db_release(&whole);
	for (int i = 0; i < 4; i++)
		cp_db_release(&p[i]);
}

static void test_unpack_corrupt(void **state)
{
	struct cp_db a, b;
	produce(&a, 0, 2);
	struct strbuf sb;
	strbuf_init(&sb);
	cp_db_pack(&a, &sb);
	for (size_t cut = 0; cut < sb.len; cut += 1 + sb.len / 97) /* truncated */
		assert_int_equal(cp_db_unpack(&b, sb.buf, cut), CP_EFORMAT);
	sb.buf[sb.len / 2] ^= 0x5a; /* damaged: refused or read, never a crash */
	if (!cp_db_unpack(&b, sb.buf, sb.len))
		cp_db_release(&b);
	cp_error_clear();
	strbuf_release(&sb);
	cp_db_release(&a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_chain),
	    cmocka_unit_test(test_tree_packed),
	    cmocka_unit_test(test_unpack_corrupt),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
