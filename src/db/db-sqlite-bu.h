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
/* The flat rows of the frames, for the per-thread tables: of[lv][frame] the frame's module
 * (lv 0), file (1) and procedure (2) row (flat_group ids, 1..ngroups; 0 for a frame that
 * is not a procedure frame), outer[frame] bit lv when no enclosing frame maps to the same
 * row of level lv; partial the <partial call paths> row (0: none). */
struct flat_map {
	uint32_t *of[3];
	uint8_t *outer;
	uint32_t partial;
	size_t ngroups;
};
void cp_db_flat_map_release(struct flat_map *map);

/* db-sqlite-flat.c: the flat view's top levels (flat_group, flat_value) from b; map
 * filled (cp_db_flat_map_release) whatever the result. */
int cp_db_write_flat(sqlite3 *sql, const struct bu *b, struct flat_map *map, const char *path);
/* db-sqlite-threads.c: the per-thread tables (scope_thread, flat_thread). The scopes are
 * written in ranges of at most cp_db_threads_budget entries (a scope with more: alone), each
 * range one walk over the profiles (tests set it low to make many ranges). */
extern size_t cp_db_threads_budget;
int cp_db_write_threads(sqlite3 *sql, const struct bu *b, const struct flat_map *map,
			const char *path);

#endif
