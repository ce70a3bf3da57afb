/* A synthetic profile database for the `callpath view` benchmark, written through the
 * database API (src/db/db.h) exactly as `callpath analyze` writes one.
 *
 *   gen-db OUT.db SCOPES [THREADS]
 *
 * A calling context tree of about SCOPES scopes over 5000 procedures of one module: each
 * procedure frame has 0..6 callees (more near the root, so that the tree is bushy and about
 * 30 deep), a loop now and then, and statements as leaves holding the samples of THREADS
 * profiles (default 4). One frame near the top calls 20000 procedures (a wide node: the
 * worst expansion). Deterministic (fixed seed). */
#include "base/error.h"
#include "db/db.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

#define NPROCS 5000

static uint32_t procs[NPROCS], files[64];
static size_t target, nthreads;
static struct cp_db db;

static uint32_t child(uint32_t parent, int kind, uint32_t proc, uint32_t line)
{
	struct cp_db_scope s;
	memset(&s, 0, sizeof s);
	s.kind = (uint8_t)kind;
	s.proc = procs[proc];
	s.module = 0;
	s.file = files[proc % 64];
	s.line = s.line_lo = line;
	s.line_hi = line + 4;
	s.addr = 0x1000 + proc * 64u + line;
	return cp_db_scope_child(&db, parent, &s);
}

static void leaf(uint32_t parent, uint32_t proc)
{
	uint32_t st = child(parent, CP_DBK_STMT, proc, 10 + (uint32_t)(rnd() % 200));
	for (size_t t = 0; t < nthreads; t++)
		if (rnd() % 3)
			cp_db_add(&db, (uint32_t)t, st, 0, (double)(1 + rnd() % 50) * 1e6);
}

/* A procedure frame and what it calls, depth-first, until the tree is big enough. */
static void frame(uint32_t parent, uint32_t proc, int depth)
{
	uint32_t f = child(parent, CP_DBK_PROC, proc, 5 + depth);
	uint32_t body = f;
	if (rnd() % 4 == 0)
		body = child(f, CP_DBK_LOOP, proc, 20 + depth);
	leaf(body, proc);
	int fan = depth < 3 ? 6 : depth > 40 ? 0 : (int)(rnd() % 4);
	for (int i = 0; i < fan && db.nscopes < target; i++)
		frame(body, (uint32_t)(rnd() % NPROCS), depth + 1);
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: gen-db OUT.db SCOPES [THREADS]\n");
		return 2;
	}
	target = strtoul(argv[2], NULL, 10);
	nthreads = argc > 3 ? strtoul(argv[3], NULL, 10) : 4;
	cp_db_init(&db);
	cp_db_module(&db, "/opt/bench/app", NULL, 0, CP_DB_MOD_EXE);
	for (int i = 0; i < 64; i++) {
		char p[64];
		snprintf(p, sizeof p, "/opt/bench/src/file%02d.c", i);
		files[i] = cp_db_file(&db, p);
	}
	for (int i = 0; i < NPROCS; i++) {
		char name[64];
		snprintf(name, sizeof name, "proc_%04d", i);
		struct cp_db_proc p = {.name = name, .module = 0, .file = files[i % 64],
				       .line = 1, .entry = 0x1000 + (uint64_t)i * 64};
		procs[i] = cp_db_proc(&db, &p);
	}
	struct cp_db_metric m = {.name = "cputime", .unit = "ns", .period = 1000000};
	cp_db_metric_add(&db, &m);
	for (size_t t = 0; t < nthreads; t++) {
		struct cp_db_profile pr = {.pid = 1, .tid = (int)(1 + t), .tidx = (uint32_t)t,
					   .rank = -1, .host = "bench", .thread_name = "bench"};
		cp_db_profile_add(&db, &pr);
	}
	uint32_t main_frame = child(0, CP_DBK_PROC, 0, 0);
	uint32_t wide = child(main_frame, CP_DBK_PROC, 1, 3);
	for (uint32_t i = 0; i < 20000; i++)
		leaf(child(wide, CP_DBK_PROC, 2 + i % (NPROCS - 2), 100 + i), i % NPROCS);
	while (db.nscopes < target)
		frame(main_frame, (uint32_t)(rnd() % NPROCS), 1);
	if (cp_db_finish(&db) < 0 || cp_db_write(&db, argv[1])) {
		fprintf(stderr, "gen-db: %s\n", cp_error_message());
		return 1;
	}
	printf("%zu scopes, %zu procedures, %zu profiles\n", db.nscopes, db.nprocs, db.nprofiles);
	cp_db_release(&db);
	return 0;
}
