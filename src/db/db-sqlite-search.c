/* The search table (search-table.h). */
#include "db/search-table.h"

#include "base/error.h"
#include "db/db-sqlite-impl.h"

#include <sqlite3.h>

static const char create[] =
    "DROP TABLE IF EXISTS search;"
    "CREATE TABLE search(id INTEGER PRIMARY KEY, parent INTEGER, hypothesis TEXT NOT NULL,"
    " kind TEXT NOT NULL, focus TEXT NOT NULL, function TEXT NOT NULL, file TEXT,"
    " line INTEGER NOT NULL, address INTEGER NOT NULL, state TEXT NOT NULL, value REAL,"
    " started_s REAL, decided_s REAL, deep_start INTEGER NOT NULL, calls REAL,"
    " iterations REAL, probe_time_ns REAL, note TEXT, rank INTEGER);";

static void bind_row(sqlite3_stmt *st, const struct cp_db_search_row *r)
{
	int k = 1;
	sqlite3_bind_int(st, k++, r->id);
	if (r->parent >= 0)
		sqlite3_bind_int(st, k++, r->parent);
	else
		sqlite3_bind_null(st, k++);
	const char *texts[] = {r->hypothesis, r->kind, r->focus, r->function, r->file};
	for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++)
		sqlite3_bind_text(st, k++, texts[i], -1, SQLITE_STATIC);
	sqlite3_bind_int(st, k++, r->line);
	sqlite3_bind_int64(st, k++, (sqlite3_int64)r->address);
	sqlite3_bind_text(st, k++, r->state, -1, SQLITE_STATIC);
	const double reals[] = {r->value, r->started_s, r->decided_s};
	for (size_t i = 0; i < 3; i++)
		sqlite3_bind_double(st, k++, reals[i]);
	sqlite3_bind_int(st, k++, r->deep_start);
	sqlite3_bind_double(st, k++, r->calls);
	sqlite3_bind_double(st, k++, r->iterations);
	sqlite3_bind_double(st, k++, r->probe_time_ns);
	sqlite3_bind_text(st, k++, r->note, -1, SQLITE_STATIC);
	if (r->rank)
		sqlite3_bind_int(st, k, r->rank);
	else
		sqlite3_bind_null(st, k);
}

static void bind_search(sqlite3_stmt *st, size_t i, const void *rows)
{
	bind_row(st, &((const struct cp_db_search_row *)rows)[i]);
}

int cp_db_put_search(const char *path, const struct cp_db_search_row *rows, size_t n)
{
	return cp_db_put_rows(path, create,
			      "INSERT INTO search VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", n,
			      bind_search, rows, "the search table");
}
