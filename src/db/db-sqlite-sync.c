/* The sync_object table (sync-objects.h). */
#include "db/sync-objects.h"

#include "base/error.h"
#include "base/xalloc.h"
#include "db/db-sqlite-impl.h"
#include "format/measure.h"

#include <sqlite3.h>
#include <string.h>

static const char create[] =
    "DROP TABLE IF EXISTS sync_object;"
    "CREATE TABLE sync_object(pid INTEGER NOT NULL, tidx INTEGER NOT NULL,"
    " object INTEGER NOT NULL, kind TEXT NOT NULL, symbol TEXT, module TEXT, site TEXT,"
    " wait_ns INTEGER NOT NULL, waits INTEGER NOT NULL, peer INTEGER, tag INTEGER,"
    " rank INTEGER);";

/* An MPI rank or tag as a column: NULL for none (and for the other kinds). */
static void bind_mpi(sqlite3_stmt *st, int col, const struct cp_sync_row *r, int v)
{
	if (cp_sync_kind_is_mpi(r->kind) && v != CP_MF_MPI_NONE)
		sqlite3_bind_int(st, col, v);
	else
		sqlite3_bind_null(st, col);
}

static void bind_row(sqlite3_stmt *st, const struct cp_sync_row *r)
{
	sqlite3_bind_int(st, 1, r->pid);
	sqlite3_bind_int64(st, 2, r->tidx);
	sqlite3_bind_int64(st, 3, (sqlite3_int64)r->object);
	sqlite3_bind_text(st, 4, r->kind, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 5, r->symbol, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 6, r->module, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 7, r->site, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 8, (sqlite3_int64)r->wait_ns);
	sqlite3_bind_int64(st, 9, (sqlite3_int64)r->waits);
	bind_mpi(st, 10, r, r->peer);
	bind_mpi(st, 11, r, r->tag);
	if (r->rank >= 0)
		sqlite3_bind_int(st, 12, r->rank);
	else
		sqlite3_bind_null(st, 12);
}

static void bind_sync(sqlite3_stmt *st, size_t i, const void *rows)
{
	bind_row(st, &((const struct cp_sync_row *)rows)[i]);
}

int cp_db_put_sync(const char *path, const struct cp_sync_rows *rows)
{
	return cp_db_put_rows(path, create,
			      "INSERT INTO sync_object VALUES(?,?,?,?,?,?,?,?,?,?,?,?)", rows->n,
			      bind_sync, rows->v, "the sync_object table");
}

static char *column_dup(sqlite3_stmt *st, int i)
{
	const unsigned char *s = sqlite3_column_text(st, i);
	return s ? xstrdup((const char *)s) : NULL;
}

static void read_row(sqlite3_stmt *st, struct cp_sync_rows *out)
{
	out->v = xrealloc(out->v, (out->n + 1) * sizeof *out->v);
	struct cp_sync_row *r = &out->v[out->n++];
	memset(r, 0, sizeof *r);
	r->pid = sqlite3_column_int(st, 0);
	r->tidx = (uint32_t)sqlite3_column_int64(st, 1);
	r->object = (uint64_t)sqlite3_column_int64(st, 2);
	const char *kind = (const char *)sqlite3_column_text(st, 3);
	r->kind = "lost";
	for (unsigned k = 1; kind && cp_sync_kind_name(k); k++)
		if (!strcmp(kind, cp_sync_kind_name(k)))
			r->kind = cp_sync_kind_name(k);
	r->symbol = column_dup(st, 4);
	r->module = column_dup(st, 5);
	r->site = column_dup(st, 6);
	r->wait_ns = (uint64_t)sqlite3_column_int64(st, 7);
	r->waits = (uint64_t)sqlite3_column_int64(st, 8);
	r->peer = r->tag = CP_MF_MPI_NONE; /* a database before MPI waits has no columns */
	r->rank = -1;
	int n = sqlite3_column_count(st);
	if (n > 10 && sqlite3_column_type(st, 9) != SQLITE_NULL)
		r->peer = sqlite3_column_int(st, 9);
	if (n > 10 && sqlite3_column_type(st, 10) != SQLITE_NULL)
		r->tag = sqlite3_column_int(st, 10);
	if (n > 11 && sqlite3_column_type(st, 11) != SQLITE_NULL)
		r->rank = sqlite3_column_int(st, 11);
}

int cp_db_get_sync(const char *path, struct cp_sync_rows *out)
{
	memset(out, 0, sizeof *out);
	sqlite3 *db = NULL;
	sqlite3_stmt *st = NULL;
	int rc = 0;
	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
		rc = cp_db_sql_error(db, path, "reading the sync_object table");
		goto out;
	}
	if (sqlite3_prepare_v2(db, "SELECT * FROM sync_object ORDER BY rowid", -1, &st, NULL) !=
	    SQLITE_OK)
		goto out; /* no such table: a database without waits by object */
	out->present = 1;
	int step;
	while ((step = sqlite3_step(st)) == SQLITE_ROW)
		read_row(st, out);
	if (step != SQLITE_DONE)
		rc = cp_db_sql_error(db, path, "reading the sync_object table");
out:
	sqlite3_finalize(st);
	sqlite3_close(db);
	if (rc)
		cp_sync_rows_release(out);
	return rc;
}
