/* The profile database file: SQLite, schema in docs/format.md ("Profile database"). With
 * db-sqlite-write.c and db-sqlite-read.c, the only code that talks to SQLite and zstd; here
 * what both halves share: error messages and the per-profile value blob. */
#include "db/db-sqlite-impl.h"

#include "base/error.h"
#include "base/strbuf.h"
#include "base/xalloc.h"

#include <math.h>
#include <stdio.h>
#include <sqlite3.h>
#include <string.h>
#include <zstd.h>

/* ---- errors -------------------------------------------------------------------------- */

int cp_db_sql_error(sqlite3 *db, const char *path, const char *what)
{
	return cp_error(CP_EIO, "DB: %s %s: %s", what, path, db ? sqlite3_errmsg(db) : "no memory");
}

int cp_db_corrupt(const char *path, const char *what)
{
	return cp_error(CP_EFORMAT, "DB: %s: truncated or corrupt (%s)", path, what);
}

uint32_t cp_db_col_id(sqlite3_stmt *st, int i)
{
	if (sqlite3_column_type(st, i) == SQLITE_NULL)
		return CP_DB_NONE;
	int64_t v = sqlite3_column_int64(st, i);
	return v < 0 || v >= CP_DB_NONE ? CP_DB_NONE - 1 : (uint32_t)v;
}

double cp_db_col_real(sqlite3_stmt *st, int i)
{
	if (sqlite3_column_type(st, i) == SQLITE_NULL)
		return NAN;
	return sqlite3_column_double(st, i);
}

void cp_db_col_stat(sqlite3_stmt *st, int i, size_t nprofiles, struct cp_db_stat *s)
{
	s->sum = cp_db_col_real(st, i);
	s->mean = cp_db_col_real(st, i + 1);
	s->min = cp_db_col_real(st, i + 2);
	s->max = cp_db_col_real(st, i + 3);
	s->stddev = cp_db_col_real(st, i + 4);
	s->argmax = cp_db_col_id(st, i + 5);
	if (s->argmax != CP_DB_NONE && s->argmax >= nprofiles)
		s->argmax = CP_DB_NONE;
	int64_t c = sqlite3_column_int64(st, i + 6);
	s->count = c < 0 ? 0 : (uint64_t)c > nprofiles ? (uint32_t)nprofiles : (uint32_t)c;
}

/* ---- the per-profile value blob -------------------------------------------------------- */

static void put_uleb(struct strbuf *b, uint64_t v)
{
	do {
		uint8_t c = v & 0x7f;
		v >>= 7;
		strbuf_addch(b, (char)(c | (v ? 0x80 : 0)));
	} while (v);
}

static int get_uleb(const uint8_t **p, const uint8_t *end, uint64_t *out)
{
	uint64_t v = 0;
	for (int shift = 0; shift < 64; shift += 7) {
		if (*p >= end)
			return -1;
		uint8_t c = *(*p)++;
		v |= (uint64_t)(c & 0x7f) << shift;
		if (!(c & 0x80)) {
			*out = v;
			return 0;
		}
	}
	return -1;
}

/* Entries in (scope, metric) order: uleb(scope - previous scope), uleb(metric * 2 + int),
 * then uleb(value) when int (a non-negative integer below 2^53), else 8 bytes IEEE-754
 * little-endian. */
void cp_db_values_encode(const struct cp_db_pvalues *pv, struct strbuf *b)
{
	uint32_t prev = 0;
	for (size_t i = 0; i < pv->n; i++) {
		const struct cp_db_value *v = &pv->v[i];
		put_uleb(b, v->scope - prev);
		prev = v->scope;
		double x = v->value;
		int is_int = x >= 0 && x < 9007199254740992.0 && x == floor(x);
		put_uleb(b, (uint64_t)v->metric * 2 + (uint64_t)is_int);
		if (is_int) {
			put_uleb(b, (uint64_t)x);
		} else {
			uint64_t bits;
			memcpy(&bits, &x, 8);
			for (int k = 0; k < 8; k++)
				strbuf_addch(b, (char)(bits >> (8 * k)));
		}
	}
}

int cp_db_values_decode(const uint8_t *p, size_t len, size_t n, const struct cp_db *db,
			struct cp_db_pvalues *pv)
{
	return cp_db_entries_decode(p, len, n, db->nscopes, cp_db_nraw(db), pv);
}

int cp_db_entries_decode(const uint8_t *p, size_t len, size_t n, size_t nrows, size_t nkeys,
			 struct cp_db_pvalues *pv)
{
	const uint8_t *end = p + len;
	uint64_t scope = 0;
	pv->v = xmalloc((n ? n : 1) * sizeof *pv->v);
	pv->alloc = n ? n : 1;
	pv->n = 0;
	pv->sorted = 1;
	for (size_t i = 0; i < n; i++) {
		uint64_t d, mk, iv;
		if (get_uleb(&p, end, &d) || get_uleb(&p, end, &mk))
			return -1;
		scope += d;
		uint64_t metric = mk >> 1;
		if (scope >= nrows || metric >= nkeys)
			return -1;
		if (i && d == 0 && metric <= pv->v[i - 1].metric)
			return -1;
		double x;
		if (mk & 1) {
			if (get_uleb(&p, end, &iv))
				return -1;
			x = (double)iv;
		} else {
			if (end - p < 8)
				return -1;
			uint64_t bits = 0;
			for (int k = 0; k < 8; k++)
				bits |= (uint64_t)p[k] << (8 * k);
			p += 8;
			memcpy(&x, &bits, 8);
		}
		pv->v[pv->n++] = (struct cp_db_value){(uint32_t)scope, (uint32_t)metric, x};
	}
	return p == end ? 0 : -1;
}

int cp_db_zstd(const void *raw, size_t n, void **z, size_t *zcap, size_t *zn, const char *path)
{
	size_t bound = ZSTD_compressBound(n);
	if (bound > *zcap) {
		*zcap = bound;
		*z = xrealloc(*z, bound);
	}
	*zn = ZSTD_compress(*z, *zcap, n ? raw : "", n, 3);
	if (ZSTD_isError(*zn))
		return cp_error(CP_EINTERNAL, "DB: writing %s: zstd: %s", path,
				ZSTD_getErrorName(*zn));
	return 0;
}

int cp_db_unzstd(const void *z, size_t zn, void *raw, size_t size)
{
	size_t got = ZSTD_decompress(raw, size, z ? z : "", zn);
	return ZSTD_isError(got) || got != size ? -1 : 0;
}

int cp_db_put_rows(const char *path, const char *create, const char *insert, size_t n,
		   void (*bind)(sqlite3_stmt *st, size_t i, const void *rows), const void *rows,
		   const char *what)
{
	sqlite3 *db = NULL;
	sqlite3_stmt *st = NULL;
	int rc = 0;
	char msg[96];
	snprintf(msg, sizeof msg, "writing %s", what);
	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK ||
	    sqlite3_exec(db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK ||
	    sqlite3_exec(db, create, NULL, NULL, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db, insert, -1, &st, NULL) != SQLITE_OK) {
		rc = cp_db_sql_error(db, path, msg);
		goto out;
	}
	for (size_t i = 0; i < n && !rc; i++) {
		bind(st, i, rows);
		if (sqlite3_step(st) != SQLITE_DONE)
			rc = cp_db_sql_error(db, path, msg);
		sqlite3_reset(st);
	}
	if (!rc && sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
		rc = cp_db_sql_error(db, path, msg);
out:
	sqlite3_finalize(st);
	sqlite3_close(db);
	return rc;
}
