/* Private to the profile database file (db-sqlite.c, db-sqlite-write.c, db-sqlite-read.c):
 * what the writing and the reading halves share. */
#ifndef CP_DB_DB_SQLITE_IMPL_H
#define CP_DB_DB_SQLITE_IMPL_H

#include "base/strbuf.h"
#include "db/db-impl.h"

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

/* PRAGMA application_id: "CPDB" */
#define CP_DB_APPLICATION_ID 0x43504442

/* "DB: <what> <path>: <SQLite's message>" (CP_EIO). */
int cp_db_sql_error(sqlite3 *db, const char *path, const char *what);
/* "DB: <path>: truncated or corrupt (<what>)" (CP_EFORMAT). */
int cp_db_corrupt(const char *path, const char *what);

/* Replaces an optional table of the database at path in one transaction: `create` (its
 * DROP and CREATE statements), then `insert` once per row, bound by bind(st, i, rows).
 * what names the table in errors ("the search table"). 0 or CP_EIO. */
int cp_db_put_rows(const char *path, const char *create, const char *insert, size_t n,
		   void (*bind)(sqlite3_stmt *st, size_t i, const void *rows), const void *rows,
		   const char *what);

/* Column i as an id (NULL: CP_DB_NONE; out of range: CP_DB_NONE - 1, which no table has)
 * and as a double (NULL: NaN, "no value"). */
uint32_t cp_db_col_id(sqlite3_stmt *st, int i);
double cp_db_col_real(sqlite3_stmt *st, int i);

/* The statistic in columns i .. i+6 (sum, mean, min, max, stddev, argmax, count); argmax
 * and count checked against nprofiles. */
struct cp_db_stat;
void cp_db_col_stat(sqlite3_stmt *st, int i, size_t nprofiles, struct cp_db_stat *s);

/* The values of one profile as a blob (the format is described at cp_db_values_encode). */
void cp_db_values_encode(const struct cp_db_pvalues *pv, struct strbuf *b);
/* Decodes n values; -1 when the blob is malformed or names a scope or metric db lacks. */
int cp_db_values_decode(const uint8_t *p, size_t len, size_t n, const struct cp_db *db,
			struct cp_db_pvalues *pv);

/* As cp_db_values_decode with other bounds: the blobs of the per-thread tables
 * (db-sqlite-threads.c) hold (profile, key, value) entries, profile < nrows, key < nkeys. */
int cp_db_entries_decode(const uint8_t *p, size_t len, size_t n, size_t nrows, size_t nkeys,
			 struct cp_db_pvalues *pv);
/* raw[0..n) as a zstd frame into *z (grown to *zcap as needed), *zn bytes: 0, or
 * CP_EINTERNAL naming path. */
int cp_db_zstd(const void *raw, size_t n, void **z, size_t *zcap, size_t *zn, const char *path);
/* Decompresses the frame z[0..zn) into raw: 0 when it holds exactly size bytes, else -1. */
int cp_db_unzstd(const void *z, size_t zn, void *raw, size_t size);

/* db-sqlite-bu.c: the bottom-up tables (bu_frame, bu_proc, bu_value) of a finished db. */
int cp_db_write_bu(sqlite3 *sql, const struct cp_db *db, const char *path);

#endif
