/* The bottom-up tables of a profile database (docs/format.md, "The bottom-up tables"): what
 * a viewer needs to serve the bottom-up (callers) view from the file without building it in
 * memory. Every procedure frame (and <partial call paths> scope) is a row of `bu_frame`
 * with its procedure's key, its caller frame and the outermost frame of the same procedure
 * on its path (recursion: only that one counts in the procedure's inclusive value); each
 * procedure's totals are in `bu_proc` and `bu_value`. A procedure is a name in a load
 * module, as the report's views key it (report/view-callers.c): its key is the id of its
 * first frame. */
#include "db/db-sqlite-bu.h"

#include "base/error.h"
#include "base/hash.h"
#include "base/xalloc.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char bu_schema[] =
    "CREATE TABLE bu_frame(scope INTEGER PRIMARY KEY, key INTEGER NOT NULL, caller INTEGER,"
    " outer INTEGER NOT NULL);\n"
    "CREATE TABLE bu_proc(key INTEGER PRIMARY KEY, frames INTEGER NOT NULL,"
    " callers INTEGER NOT NULL);\n"
    "CREATE TABLE bu_value(key INTEGER NOT NULL, metric INTEGER NOT NULL, incl_sum REAL,"
    " excl_sum REAL, PRIMARY KEY(key, metric)) WITHOUT ROWID;\n";

static const char bu_index[] = "CREATE INDEX bu_frame_key ON bu_frame(key);\n";

static int is_frame(const struct cp_db_scope *s)
{
	return s->kind == CP_DBK_PROC || s->kind == CP_DBK_PARTIAL;
}

static const char *proc_name(const struct cp_db *db, const struct cp_db_scope *s)
{
	if (s->kind == CP_DBK_PARTIAL)
		return "<partial call paths>";
	return s->proc < db->nprocs ? db->procs[s->proc].name : "<unknown procedure>";
}

static const char *module_path(const struct cp_db *db, const struct cp_db_scope *s)
{
	return s->kind != CP_DBK_PARTIAL && s->module < db->nmodules ? db->modules[s->module].path
								     : NULL;
}

static int key_eq(const void *ctx, uint32_t idx, const void *k)
{
	const struct bu *b = ctx;
	const struct cp_db_scope *x = &b->db->scopes[b->keys[idx]], *y = k;
	const char *mx = module_path(b->db, x), *my = module_path(b->db, y);
	return x->kind == y->kind && !strcmp(proc_name(b->db, x), proc_name(b->db, y)) &&
	       (mx == my || (mx && my && !strcmp(mx, my)));
}

static uint32_t key_of(struct bu *b, uint32_t i)
{
	const struct cp_db_scope *s = &b->db->scopes[i];
	const char *mod = module_path(b->db, s);
	uint64_t h = cp_hash_mix(cp_hash_str(proc_name(b->db, s)), mod ? cp_hash_str(mod) : 0);
	h = cp_hash_mix(h, s->kind);
	uint32_t k = cp_hashtab_find(&b->tab, h, key_eq, b, s);
	if (k != CP_HASH_NONE)
		return b->keys[k];
	XGROW(b->keys, b->nkeys + 1, b->akeys);
	b->keys[b->nkeys] = i;
	cp_hashtab_insert(&b->tab, h, (uint32_t)b->nkeys++);
	return i;
}

/* Keys, frames and outermost frames, in scope order (a parent before its children). */
static void bu_compute(struct bu *b)
{
	const struct cp_db *db = b->db;
	for (uint32_t i = 1; i < db->nscopes; i++) {
		const struct cp_db_scope *s = &db->scopes[i];
		uint32_t up = s->parent < i ? b->frame[s->parent] : CP_DB_NONE;
		if (!is_frame(s)) {
			b->frame[i] = up;
			continue;
		}
		b->frame[i] = i;
		uint32_t k = b->key[i] = key_of(b, i);
		b->outer[i] = i;
		for (uint32_t a = up; a != CP_DB_NONE; a = b->frame[db->scopes[a].parent])
			if (b->key[a] == k) {
				b->outer[i] = b->outer[a];
				break;
			}
		b->nframe[k]++;
		if (up != CP_DB_NONE)
			b->nframe[k] |= 1u << 31;
	}
}

int cp_db_bu_exec(sqlite3 *sql, const char *text, const char *path)
{
	return sqlite3_exec(sql, text, NULL, NULL, NULL) == SQLITE_OK
		   ? 0
		   : cp_db_sql_error(sql, path, "writing");
}

static int bu_step(sqlite3 *sql, sqlite3_stmt *st, const char *path)
{
	int rc = sqlite3_step(st) == SQLITE_DONE ? 0 : cp_db_sql_error(sql, path, "writing");
	sqlite3_reset(st);
	return rc;
}

static int write_frames(sqlite3 *sql, const struct bu *b, const char *path)
{
	const struct cp_db *db = b->db;
	sqlite3_stmt *st = NULL;
	int rc = 0;
	if (sqlite3_prepare_v2(sql, "INSERT INTO bu_frame VALUES(?1, ?2, ?3, ?4)", -1, &st, NULL) !=
	    SQLITE_OK)
		return cp_db_sql_error(sql, path, "writing");
	for (uint32_t i = 1; i < db->nscopes && !rc; i++) {
		if (b->frame[i] != i)
			continue;
		uint32_t up = b->frame[db->scopes[i].parent];
		sqlite3_bind_int64(st, 1, i);
		sqlite3_bind_int64(st, 2, b->key[i]);
		if (up == CP_DB_NONE)
			sqlite3_bind_null(st, 3);
		else
			sqlite3_bind_int64(st, 3, up);
		sqlite3_bind_int64(st, 4, b->outer[i]);
		rc = bu_step(sql, st, path);
	}
	sqlite3_finalize(st);
	return rc;
}

/* Per key and raw metric: the inclusive sums of its outermost frames, the exclusive sums
 * of all its frames (report/view-callers.c). */
static int write_procs(sqlite3 *sql, const struct bu *b, const char *path)
{
	const struct cp_db *db = b->db;
	size_t nm = 0;
	while (nm < db->nmetrics && db->metrics[nm].kind == CP_DB_METRIC_RAW)
		nm++;
	double *acc = xcalloc(db->nscopes * 2 * nm + 1, sizeof *acc);
	for (uint32_t i = 1; i < db->nscopes; i++)
		for (size_t m = 0; m < nm && b->frame[i] == i; m++) {
			double in = cp_db_stat_get(db, i, (uint32_t)m, 1)->sum;
			double ex = cp_db_stat_get(db, i, (uint32_t)m, 0)->sum;
			double *a = acc + ((size_t)b->key[i] * nm + m) * 2;
			a[0] += b->outer[i] == i && !isnan(in) ? in : 0;
			a[1] += isnan(ex) ? 0 : ex;
		}
	sqlite3_stmt *sp = NULL, *sv = NULL;
	int rc = 0;
	if (sqlite3_prepare_v2(sql, "INSERT INTO bu_proc VALUES(?1, ?2, ?3)", -1, &sp, NULL) ||
	    sqlite3_prepare_v2(sql, "INSERT INTO bu_value VALUES(?1, ?2, ?3, ?4)", -1, &sv, NULL))
		rc = cp_db_sql_error(sql, path, "writing");
	for (size_t j = 0; j < b->nkeys && !rc; j++) {
		uint32_t k = b->keys[j];
		sqlite3_bind_int64(sp, 1, k);
		sqlite3_bind_int64(sp, 2, b->nframe[k] & ~(1u << 31));
		sqlite3_bind_int64(sp, 3, b->nframe[k] >> 31);
		rc = bu_step(sql, sp, path);
		for (size_t m = 0; m < nm && !rc; m++) {
			const double *a = acc + ((size_t)k * nm + m) * 2;
			if (a[0] == 0 && a[1] == 0)
				continue;
			sqlite3_bind_int64(sv, 1, k);
			sqlite3_bind_int64(sv, 2, (int64_t)m);
			sqlite3_bind_double(sv, 3, a[0]);
			sqlite3_bind_double(sv, 4, a[1]);
			rc = bu_step(sql, sv, path);
		}
	}
	sqlite3_finalize(sp);
	sqlite3_finalize(sv);
	free(acc);
	return rc;
}

int cp_db_write_bu(sqlite3 *sql, const struct cp_db *db, const char *path)
{
	struct bu b = {.db = db};
	size_t n = db->nscopes + 1;
	b.key = xcalloc(n, sizeof *b.key);
	b.frame = xmalloc(n * sizeof *b.frame);
	b.outer = xcalloc(n, sizeof *b.outer);
	b.nframe = xcalloc(n, sizeof *b.nframe);
	b.frame[0] = CP_DB_NONE;
	cp_hashtab_init(&b.tab);
	bu_compute(&b);
	int rc = cp_db_bu_exec(sql, bu_schema, path);
	if (!rc)
		rc = write_frames(sql, &b, path);
	if (!rc)
		rc = write_procs(sql, &b, path);
	if (!rc)
		rc = cp_db_bu_exec(sql, bu_index, path);
	struct flat_map map = {0};
	if (!rc)
		rc = cp_db_write_flat(sql, &b, &map, path);
	if (!rc)
		rc = cp_db_write_threads(sql, &b, &map, path);
	cp_db_flat_map_release(&map);
	cp_hashtab_release(&b.tab);
	free(b.keys);
	free(b.key);
	free(b.frame);
	free(b.outer);
	free(b.nframe);
	return rc;
}
