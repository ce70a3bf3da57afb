/* The small valid database the database and view fuzzers start from (fuzz-db.c: its seed
 * and the base of its SQL inputs; fuzz-view-query.c: the database it answers from): an
 * executable with a build id, procedures main and work, a loop, an inlined call, a
 * recursion, statements in two files (one named relatively, one that does not exist), a
 * frame's own cost, two metrics and a derived one, two profiles and a note. */
#ifndef CP_FUZZ_SEED_DB_H
#define CP_FUZZ_SEED_DB_H

#include "base/error.h"
#include "db/db.h"
#include "../unit/db/db-build.h" /* test_db_scope */

#include <stdint.h>
#include <stdio.h>
#include <string.h>

static uint32_t fuzz_scope(struct cp_db *db, uint32_t parent, int kind, uint32_t proc,
			   uint32_t file, uint32_t line)
{
	return test_db_scope(db, parent, kind, proc, 0, file, line, line, line + 3, line * 16u);
}

/* Writes the database to `to` (an error is printed, the fuzzers then see no seed). */
static void fuzz_seed_db_write(const char *to)
{
	struct cp_db db;
	cp_db_init(&db);
	uint8_t bid[2] = {1, 2};
	cp_db_module(&db, "/bin/app", bid, 2, CP_DB_MOD_EXE);
	uint32_t f = cp_db_file(&db, "/nonexistent/src/a.c");
	uint32_t rel = cp_db_file(&db, "../relative.c");
	struct cp_db_proc p = {.name = "main", .file = f, .line = 1, .entry = 16};
	uint32_t pm = cp_db_proc(&db, &p);
	p.name = "work";
	p.entry = 64;
	uint32_t pw = cp_db_proc(&db, &p);
	struct cp_db_metric m = {.name = "cputime", .unit = "ns", .period = 1000};
	cp_db_metric_add(&db, &m);
	m.name = "cycles";
	cp_db_metric_add(&db, &m);
	struct cp_db_profile pr = {.rank = -1, .host = "h", .thread_name = "t"};
	cp_db_profile_add(&db, &pr);
	pr.tidx = 1;
	cp_db_profile_add(&db, &pr);
	uint32_t s1 = fuzz_scope(&db, 0, CP_DBK_PROC, pm, CP_DB_NONE, 0);
	uint32_t l = fuzz_scope(&db, s1, CP_DBK_LOOP, pm, f, 5);
	uint32_t s2 = fuzz_scope(&db, l, CP_DBK_PROC, pw, f, 6);
	uint32_t in = fuzz_scope(&db, s2, CP_DBK_INLINE, pm, f, 9);
	uint32_t st = fuzz_scope(&db, in, CP_DBK_STMT, pm, f, 20);
	uint32_t st2 = fuzz_scope(&db, l, CP_DBK_STMT, pm, rel, 7);
	uint32_t rec = fuzz_scope(&db, s2, CP_DBK_PROC, pw, f, 30);
	cp_db_add(&db, 0, st, 0, 3000);
	cp_db_add(&db, 1, st, 0, 1000);
	cp_db_add(&db, 1, st, 1, 2.5);
	cp_db_add(&db, 0, st2, 0, 7);
	cp_db_add(&db, 0, s1, 0, 11); /* a frame's own cost: a <no line> leaf */
	cp_db_add(&db, 1, rec, 1, 4);
	cp_db_note_add(&db, "note");
	cp_db_derived_add(&db, "ratio", "cycles / cputime", "", NULL);
	if (cp_db_write(&db, to))
		fprintf(stderr, "%s\n", cp_error_message());
	cp_db_release(&db);
}

#endif
