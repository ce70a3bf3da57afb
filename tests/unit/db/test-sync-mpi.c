/* MPI waits by synchronization object (db/sync-objects.h): rows of one communicator with
 * different tags or peers are different objects, named with communicator, tag and peer;
 * the sync_object table keeps peer, tag and rank (NULL for none and for the other kinds),
 * and a table written before them reads as having none. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "base/strbuf.h"
#include "db/sync-objects.h"
#include "format/measure.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static struct cp_sync_row row(const char *kind, uint64_t object, const char *symbol, int peer,
			      int tag, uint64_t ns, const char *site)
{
	struct cp_sync_row r = {
	    .pid = 7, .rank = 1, .object = object, .kind = kind, .peer = peer, .tag = tag};
	r.symbol = symbol ? strdup(symbol) : NULL;
	r.site = strdup(site);
	r.wait_ns = ns;
	r.waits = 1;
	return r;
}

static void make_rows(struct cp_sync_rows *rows)
{
	rows->n = 6;
	rows->v = calloc(rows->n, sizeof *rows->v);
	rows->present = 1;
	rows->v[0] = row("mpi-recv", 0, "MPI_COMM_WORLD", 1, 7, 500, "late (a.c:3)");
	rows->v[1] = row("mpi-recv", 0, "MPI_COMM_WORLD", 1, 7, 300, "late (a.c:9)");
	rows->v[2] = row("mpi-recv", 0, "MPI_COMM_WORLD", 1, 8, 100, "late (a.c:3)");
	rows->v[3] = row("mpi-send", 2, "rows", 3, -1, 90, "push (a.c:20)");
	rows->v[4] =
	    row("mpi-coll", 3, "comm#2", CP_MF_MPI_NONE, CP_MF_MPI_NONE, 80, "bar (a.c:30)");
	rows->v[5] = row("mpi-recv", CP_MF_MPI_COMM_UNKNOWN, NULL, CP_MF_MPI_NONE, CP_MF_MPI_NONE,
			 70, "wait (a.c:40)");
}

static void check_summary(const struct cp_sync_rows *rows)
{
	static const char *const want[] = {
	    "MPI_COMM_WORLD tag 7 from rank 1", "MPI_COMM_WORLD tag 8 from rank 1",
	    "rows tag any to rank 3", "comm#2", "(communicator unknown)"};
	static const uint64_t ns[] = {800, 100, 90, 80, 70};
	struct cp_sync_summary s;
	cp_sync_summarize(rows, &s);
	assert_int_equal(s.n, 5);
	assert_int_equal(s.wait_ns, 1140);
	struct strbuf name;
	strbuf_init(&name);
	for (size_t i = 0; i < s.n; i++) {
		strbuf_clear(&name);
		cp_sync_object_name(&s.v[i], &name);
		assert_string_equal(name.buf, want[i]);
		assert_int_equal(s.v[i].wait_ns, ns[i]);
	}
	assert_int_equal(s.v[0].nsites, 2);
	assert_string_equal(s.v[0].sites[0].site, "late (a.c:3)");
	strbuf_release(&name);
	cp_sync_summary_release(&s);
}

static void test_objects(void **state)
{
	(void)state;
	struct cp_sync_rows rows = {0};
	make_rows(&rows);
	check_summary(&rows);
	assert_int_equal(cp_sync_kind_is_mpi("mpi-coll"), 1);
	assert_int_equal(cp_sync_kind_is_mpi("mutex"), 0);
	assert_string_equal(cp_sync_kind_name(CP_MF_SYNC_MPI_SEND), "mpi-send");
	cp_sync_rows_release(&rows);
}

static void test_table(void **state)
{
	(void)state;
	char path[] = "/tmp/cp-sync-mpi-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	struct cp_sync_rows rows = {0}, back;
	make_rows(&rows);
	assert_int_equal(cp_db_put_sync(path, &rows), 0);
	assert_int_equal(cp_db_get_sync(path, &back), 0);
	assert_int_equal(back.n, rows.n);
	check_summary(&back);
	assert_int_equal(back.v[4].peer, CP_MF_MPI_NONE);
	assert_int_equal(back.v[3].tag, -1);
	assert_int_equal(back.v[3].rank, 1);
	cp_sync_rows_release(&back);
	/* a table of before MPI waits: no peer and tag columns */
	sqlite3 *db;
	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	assert_int_equal(
	    sqlite3_exec(db,
			 "DROP TABLE sync_object; CREATE TABLE sync_object(pid, tidx, "
			 "object, kind, symbol, module, site, wait_ns, waits);"
			 "INSERT INTO sync_object VALUES(7,0,4096,'mutex','m','x','s',5,1);",
			 NULL, NULL, NULL),
	    SQLITE_OK);
	sqlite3_close(db);
	assert_int_equal(cp_db_get_sync(path, &back), 0);
	assert_int_equal(back.n, 1);
	assert_string_equal(back.v[0].kind, "mutex");
	assert_int_equal(back.v[0].peer, CP_MF_MPI_NONE);
	assert_int_equal(back.v[0].tag, CP_MF_MPI_NONE);
	assert_int_equal(back.v[0].rank, -1);
	cp_sync_rows_release(&back);
	cp_sync_rows_release(&rows);
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_objects),
	    cmocka_unit_test(test_table),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
