/* Private to the bottom-up and flat tables of the database file (db-sqlite-bu.c,
 * db-sqlite-flat.c): the frames of the scope tree and their procedures' keys. */
#ifndef CP_DB_DB_SQLITE_BU_H
#define CP_DB_DB_SQLITE_BU_H

#include "base/hash.h"
#include "db/db-sqlite-impl.h"

struct bu {
	const struct cp_db *db;
	uint32_t *key;	  /* per scope: its procedure's key (frames only) */
	uint32_t *frame;  /* per scope: the nearest frame at or above it, CP_DB_NONE */
	uint32_t *outer;  /* per frame */
	uint32_t *nframe; /* per key: frames; then whether one has a caller (bit 31) */
	struct cp_hashtab tab;
	uint32_t *keys; /* the keys in the table, in order */
	size_t nkeys, akeys;
};

/* Runs SQL text: 0, or the error of SQLite as cp_db_sql_error. */
int cp_db_bu_exec(sqlite3 *sql, const char *text, const char *path);
/* db-sqlite-flat.c: the flat view's top levels (flat_group, flat_value) from b. */
int cp_db_write_flat(sqlite3 *sql, const struct bu *b, const char *path);

#endif
