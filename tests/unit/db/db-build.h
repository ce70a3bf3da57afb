/* A small database built through the db.h API, shared by the db unit tests:
 *
 *   root
 *   └─ main (proc, /src/m.c)                      profile 0 (main thread): stmt m.c:5 = 2
 *      ├─ loop at m.c:10-20
 *      │  └─ work (proc, called at m.c:12)
 *      │     └─ loop at w.c:30-40
 *      │        └─ stmt w.c:33                     profile 1: 30, profile 2: 10 (cputime)
 *      └─ stmt m.c:5
 *
 * metrics: cputime (ns), cycles (events; profile 1: 60 at w.c:33, profile 2: 20). */
#ifndef CP_TEST_DB_BUILD_H
#define CP_TEST_DB_BUILD_H

#include "db/db.h"
#include "db/query.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

struct test_db_ids {
	uint32_t mod, fm, fw, pmain, pwork;
	uint32_t smain, sloop1, swork, sloop2, sstmt, smstmt;
	uint32_t cputime, cycles;
	uint32_t prof[3];
};

static inline uint32_t test_db_scope(struct cp_db *db, uint32_t parent, int kind, uint32_t proc,
				     uint32_t mod, uint32_t file, uint32_t line, uint32_t lo,
				     uint32_t hi, uint64_t addr)
{
	struct cp_db_scope s;
	memset(&s, 0, sizeof s);
	s.kind = (uint8_t)kind;
	s.proc = proc;
	s.module = mod;
	s.file = file;
	s.line = line;
	s.line_lo = lo;
	s.line_hi = hi;
	s.addr = addr;
	return cp_db_scope_child(db, parent, &s);
}

static inline void test_db_build(struct cp_db *db, struct test_db_ids *t)
{
	static const uint8_t bid[4] = {0xde, 0xad, 0xbe, 0xef};
	cp_db_init(db);
	t->mod = cp_db_module(db, "/bin/app", bid, sizeof bid, CP_DB_MOD_EXE);
	t->fm = cp_db_file(db, "/src/m.c");
	t->fw = cp_db_file(db, "/src/w.c");
	struct cp_db_proc p;
	memset(&p, 0, sizeof p);
	p.name = "main";
	p.module = t->mod;
	p.file = t->fm;
	p.line = 3;
	p.entry = 0x1000;
	t->pmain = cp_db_proc(db, &p);
	p.name = "work";
	p.file = t->fw;
	p.line = 28;
	p.entry = 0x2000;
	t->pwork = cp_db_proc(db, &p);
	t->smain = test_db_scope(db, 0, CP_DBK_PROC, t->pmain, t->mod, CP_DB_NONE, 0, 0, 0, 0x1000);
	t->sloop1 =
	    test_db_scope(db, t->smain, CP_DBK_LOOP, t->pmain, t->mod, t->fm, 10, 10, 20, 0x1010);
	t->swork =
	    test_db_scope(db, t->sloop1, CP_DBK_PROC, t->pwork, t->mod, t->fm, 12, 0, 0, 0x2000);
	t->sloop2 =
	    test_db_scope(db, t->swork, CP_DBK_LOOP, t->pwork, t->mod, t->fw, 30, 30, 40, 0x2010);
	t->sstmt =
	    test_db_scope(db, t->sloop2, CP_DBK_STMT, t->pwork, t->mod, t->fw, 33, 0, 0, 0x2020);
	t->smstmt =
	    test_db_scope(db, t->smain, CP_DBK_STMT, t->pmain, t->mod, t->fm, 5, 0, 0, 0x1004);
	struct cp_db_metric m;
	memset(&m, 0, sizeof m);
	m.name = "cputime";
	m.unit = "ns";
	m.description = "CPU time";
	m.period = 1000000;
	t->cputime = cp_db_metric_add(db, &m);
	m.name = "cycles";
	m.unit = "events";
	m.description = NULL;
	m.period = 100000;
	t->cycles = cp_db_metric_add(db, &m);
	struct cp_db_profile pr;
	memset(&pr, 0, sizeof pr);
	pr.pid = 100;
	pr.ppid = 1;
	pr.rank = -1;
	pr.host = "node1";
	pr.command = "./app 1";
	for (int i = 0; i < 3; i++) {
		pr.tid = 100 + i;
		pr.tidx = (uint32_t)i;
		pr.thread_name = i ? "worker" : "app";
		pr.samples[0] = i == 0 ? 2 : i == 1 ? 30 : 10;
		pr.start_ns = 1000000000ull * (uint64_t)(i + 1);
		pr.end_ns = pr.start_ns + 5;
		t->prof[i] = cp_db_profile_add(db, &pr);
	}
	cp_db_add(db, t->prof[0], t->smstmt, t->cputime, 2);
	cp_db_add(db, t->prof[1], t->sstmt, t->cputime, 20);
	cp_db_add(db, t->prof[1], t->sstmt, t->cycles, 60);
	cp_db_add(db, t->prof[2], t->sstmt, t->cputime, 10);
	cp_db_add(db, t->prof[1], t->sstmt, t->cputime, 10); /* merged later: 30 in all */
	cp_db_add(db, t->prof[2], t->sstmt, t->cycles, 20);
}

/* The query tests' fixture: writes db (released) to /tmp/cp-test-TAG-PID.db (into path),
 * reads it whole into *whole and opens it lazily (*head, *q). 0 or -1. */
static inline int test_db_write_open(struct cp_db *db, const char *tag, char *path, size_t cap,
				     struct cp_db *whole, struct cp_db *head, struct cp_dbq **q)
{
	snprintf(path, cap, "/tmp/cp-test-%s-%d.db", tag, (int)getpid());
	if (cp_db_finish(db) < 0 || cp_db_write(db, path))
		return -1;
	cp_db_release(db);
	if (cp_db_read(whole, path))
		return -1;
	return cp_dbq_open(path, head, q);
}

static inline void test_db_close(const char *path, struct cp_db *whole, struct cp_db *head,
				 struct cp_dbq *q)
{
	cp_dbq_close(q);
	cp_db_release(head);
	cp_db_release(whole);
	unlink(path);
}

#endif
