/* Lazy reading of a profile database (query.h): scopes and statistics read from SQLite on
 * demand. With db-sqlite*.c, the only code that talks to SQLite. */
#include "db/query.h"
#include "db/db-sqlite-impl.h"

#include "base/error.h"
#include "base/strbuf.h"
#include "base/xalloc.h"

#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct cp_dbq {
	sqlite3 *sql;
	const char *path;
	const struct cp_db *head;
	size_t nscopes;
	sqlite3_stmt *one, *children;
	sqlite3_stmt *frame; /* the bottom-up tables' frame row, NULL without them */
	int has_bu, has_flat;
	struct cp_db_stat *stats; /* one row's, head->nmetrics * 2 */
	sqlite3_stmt *thr[2];	  /* the per-thread tables' rows, NULL without them */
};

#define SCOPE_COLS                                                                                 \
	"s.id, s.parent, s.kind, s.depth, s.proc, s.module, s.file, s.line, s.line_lo, "           \
	"s.line_hi, s.addr"
#define VALUE_COLS                                                                                 \
	"v.metric, v.incl_sum, v.incl_mean, v.incl_min, v.incl_max, v.incl_stddev, "               \
	"v.incl_argmax, v.incl_count, v.excl_sum, v.excl_mean, v.excl_min, v.excl_max, "           \
	"v.excl_stddev, v.excl_argmax, v.excl_count"
#define FRAME_COLS "f.scope, f.key, f.caller, f.outer, s.kind, s.proc, s.module, s.file, s.line"
/* column of v.metric in the statements below */
#define VCOL 12

#define col_id cp_db_col_id

static void clear_stats(struct cp_dbq *q)
{
	size_t n = q->head->nmetrics * 2;
	memset(q->stats, 0, (n + 1) * sizeof *q->stats);
	for (size_t i = 0; i < n; i++)
		q->stats[i].argmax = CP_DB_NONE;
}

/* SCOPE_COLS from column c0 on. */
static void read_scope_at(const struct cp_dbq *q, sqlite3_stmt *st, int c0, struct cp_dbq_row *row)
{
	struct cp_db_scope *s = &row->s;
	const struct cp_db *h = q->head;
	memset(s, 0, sizeof *s);
	row->id = col_id(st, c0 + 0);
	s->parent = col_id(st, c0 + 1);
	s->kind = (uint8_t)sqlite3_column_int(st, c0 + 2);
	s->depth = (uint32_t)sqlite3_column_int64(st, c0 + 3);
	s->proc = col_id(st, c0 + 4);
	s->module = col_id(st, c0 + 5);
	s->file = col_id(st, c0 + 6);
	s->line = (uint32_t)sqlite3_column_int64(st, c0 + 7);
	s->line_lo = (uint32_t)sqlite3_column_int64(st, c0 + 8);
	s->line_hi = (uint32_t)sqlite3_column_int64(st, c0 + 9);
	s->addr = (uint64_t)sqlite3_column_int64(st, c0 + 10);
	s->first_child = s->next_sibling = CP_DB_NONE;
	/* ids the head does not know are dropped, never followed */
	if (s->proc != CP_DB_NONE && s->proc >= h->nprocs)
		s->proc = CP_DB_NONE;
	if (s->module != CP_DB_NONE && s->module >= h->nmodules)
		s->module = CP_DB_NONE;
	if (s->file != CP_DB_NONE && s->file >= h->nfiles)
		s->file = CP_DB_NONE;
	if (s->kind > CP_DBK_PARTIAL)
		s->kind = CP_DBK_STMT;
}

static void read_scope(const struct cp_dbq *q, sqlite3_stmt *st, struct cp_dbq_row *row)
{
	read_scope_at(q, st, 0, row);
}

static int sql_fail(struct cp_dbq *q)
{
	return cp_db_sql_error(q->sql, q->path, "reading");
}

/* Steps st (SCOPE_COLS, one extra column, then VALUE_COLS; ordered by scope id) and calls fn
 * once per scope with its statistics. extra_is_parent_kind: what the extra column holds. */
static int run_rows(struct cp_dbq *q, sqlite3_stmt *st, int extra_is_parent_kind, cp_dbq_row_fn fn,
		    void *ctx)
{
	struct cp_dbq_row row = {.id = CP_DB_NONE, .stats = q->stats};
	int have = 0, rc = 0, s;
	while ((s = sqlite3_step(st)) == SQLITE_ROW) {
		uint32_t id = col_id(st, 0);
		if (!have || id != row.id) {
			if (have && (rc = fn(ctx, &row)))
				break;
			clear_stats(q);
			read_scope(q, st, &row);
			int extra = sqlite3_column_int(st, 11);
			row.has_children = extra_is_parent_kind ? 0 : extra;
			row.parent_kind = extra_is_parent_kind ? extra : -1;
			have = 1;
		}
		uint32_t m = col_id(st, VCOL);
		if (m < q->head->nmetrics) {
			cp_db_col_stat(st, VCOL + 1, q->head->nprofiles, &q->stats[m * 2 + 1]);
			cp_db_col_stat(st, VCOL + 8, q->head->nprofiles, &q->stats[m * 2]);
		}
	}
	if (s != SQLITE_ROW && s != SQLITE_DONE)
		rc = sql_fail(q);
	else if (have && s == SQLITE_DONE && !rc)
		rc = fn(ctx, &row);
	sqlite3_reset(st);
	return rc;
}

static sqlite3_stmt *prepare(struct cp_dbq *q, const char *text)
{
	sqlite3_stmt *st = NULL;
	if (sqlite3_prepare_v2(q->sql, text, -1, &st, NULL) != SQLITE_OK)
		return NULL;
	return st;
}

int cp_dbq_open(const char *path, struct cp_db *head, struct cp_dbq **out)
{
	*out = NULL;
	int rc = cp_db_read_head(head, path);
	if (rc)
		return rc;
	struct cp_dbq *q = xcalloc(1, sizeof *q);
	q->path = xstrdup(path);
	q->head = head;
	q->stats = xcalloc(head->nmetrics * 2 + 1, sizeof *q->stats);
	if (sqlite3_open_v2(path, &q->sql, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, NULL) !=
	    SQLITE_OK) {
		rc = cp_db_sql_error(q->sql, path, "opening");
		goto out;
	}
	sqlite3_db_config(q->sql, SQLITE_DBCONFIG_DEFENSIVE, 1, NULL);
	sqlite3_exec(q->sql, "PRAGMA trusted_schema=OFF; PRAGMA query_only=ON", NULL, NULL, NULL);
	q->one =
	    prepare(q, "SELECT " SCOPE_COLS ", EXISTS(SELECT 1 FROM scope c WHERE c.parent ="
		       " s.id), " VALUE_COLS " FROM scope s LEFT JOIN value v ON v.scope = s.id"
		       " WHERE s.id = ?1 ORDER BY v.metric");
	q->children =
	    prepare(q, "SELECT " SCOPE_COLS ", EXISTS(SELECT 1 FROM scope c WHERE "
		       "c.parent = s.id), " VALUE_COLS " FROM scope s LEFT JOIN value v ON"
		       " v.scope = s.id WHERE s.parent = ?1 ORDER BY s.id, v.metric");
	q->frame = prepare(q, "SELECT " FRAME_COLS " FROM bu_frame f JOIN scope s ON s.id ="
			      " f.scope WHERE f.scope = ?1");
	q->has_bu = q->frame != NULL;
	q->thr[CP_DBQ_SCOPE] =
	    prepare(q, "SELECT n, size, data FROM scope_thread WHERE scope = ?1");
	q->thr[CP_DBQ_FLAT] = prepare(q, "SELECT n, size, data FROM flat_thread WHERE grp = ?1");
	sqlite3_stmt *flat = prepare(q, "SELECT 1 FROM flat_group LIMIT 1");
	q->has_flat = q->has_bu && flat != NULL;
	sqlite3_finalize(flat);
	sqlite3_stmt *count = prepare(q, "SELECT max(id) FROM scope");
	if (!q->one || !q->children || !count || sqlite3_step(count) != SQLITE_ROW) {
		rc = cp_db_corrupt(path, sqlite3_errmsg(q->sql));
		sqlite3_finalize(count);
		goto out;
	}
	q->nscopes = (size_t)sqlite3_column_int64(count, 0) + 1;
	sqlite3_finalize(count);
out:
	if (rc) {
		cp_dbq_close(q);
		cp_db_release(head);
		memset(head, 0, sizeof *head);
		return rc;
	}
	*out = q;
	return 0;
}

void cp_dbq_close(struct cp_dbq *q)
{
	if (!q)
		return;
	sqlite3_finalize(q->one);
	sqlite3_finalize(q->children);
	sqlite3_finalize(q->frame);
	sqlite3_finalize(q->thr[0]);
	sqlite3_finalize(q->thr[1]);
	if (q->sql)
		sqlite3_close(q->sql);
	free((char *)q->path);
	free(q->stats);
	free(q);
}

void cp_dbq_hold(struct cp_dbq *q, int on)
{
	if (!q || !q->sql)
		return;
	if (sqlite3_exec(q->sql, on ? "BEGIN" : "COMMIT", NULL, NULL, NULL) != SQLITE_OK && !on)
		sqlite3_exec(q->sql, "ROLLBACK", NULL, NULL, NULL);
}

size_t cp_dbq_nscopes(const struct cp_dbq *q)
{
	return q->nscopes;
}

struct found {
	cp_dbq_row_fn fn;
	void *ctx;
	int seen;
};

static int found_row(void *ctx, const struct cp_dbq_row *row)
{
	struct found *f = ctx;
	f->seen = 1;
	return f->fn(f->ctx, row);
}

int cp_dbq_scope(struct cp_dbq *q, uint32_t id, cp_dbq_row_fn fn, void *ctx)
{
	struct found f = {fn, ctx, 0};
	sqlite3_bind_int64(q->one, 1, id);
	int rc = run_rows(q, q->one, 0, found_row, &f);
	if (!rc && !f.seen)
		return cp_error(CP_ENOENT, "no scope %u", id);
	return rc;
}

int cp_dbq_children(struct cp_dbq *q, uint32_t parent, cp_dbq_row_fn fn, void *ctx)
{
	sqlite3_bind_int64(q->children, 1, parent);
	return run_rows(q, q->children, 0, fn, ctx);
}

static void add_kinds(struct strbuf *sql, unsigned kinds)
{
	strbuf_addstr(sql, "s.kind IN (-1");
	for (int k = 0; k <= CP_DBK_PARTIAL; k++)
		if (kinds & (1u << k))
			strbuf_addf(sql, ",%d", k);
	strbuf_addch(sql, ')');
}

int cp_dbq_scopes_of_procs(struct cp_dbq *q, const uint32_t *procs, size_t n, unsigned kinds,
			   uint32_t metric, size_t limit, cp_dbq_row_fn fn, void *ctx)
{
	if (!n)
		return 0;
	struct strbuf sql;
	strbuf_init(&sql);
	strbuf_addf(&sql,
		    "WITH hit(id) AS (SELECT s.id FROM scope s LEFT JOIN value w ON w.scope = s.id"
		    " AND w.metric = %u WHERE ",
		    metric);
	add_kinds(&sql, kinds);
	strbuf_addstr(&sql, " AND s.proc IN (");
	for (size_t i = 0; i < n; i++)
		strbuf_addf(&sql, "%s%u", i ? "," : "", procs[i]);
	strbuf_addf(&sql,
		    ") ORDER BY coalesce(w.incl_sum, 0) DESC LIMIT %zu) SELECT " SCOPE_COLS
		    ", 0, " VALUE_COLS " FROM hit JOIN scope s ON s.id = hit.id LEFT JOIN value v"
		    " ON v.scope = s.id ORDER BY s.id, v.metric",
		    limit);
	sqlite3_stmt *st = prepare(q, sql.buf);
	strbuf_release(&sql);
	if (!st)
		return sql_fail(q);
	int rc = run_rows(q, st, 0, fn, ctx);
	sqlite3_finalize(st);
	return rc;
}

int cp_dbq_scopes_of_file(struct cp_dbq *q, uint32_t file, unsigned kinds, cp_dbq_row_fn fn,
			  void *ctx)
{
	struct strbuf sql;
	strbuf_init(&sql);
	strbuf_addstr(&sql, "SELECT " SCOPE_COLS ", p.kind, " VALUE_COLS
			    " FROM scope s JOIN scope p ON p.id = s.parent LEFT JOIN value v ON "
			    "v.scope = s.id WHERE ");
	add_kinds(&sql, kinds);
	strbuf_addf(&sql, " AND s.file = %u ORDER BY s.id, v.metric", file);
	sqlite3_stmt *st = prepare(q, sql.buf);
	strbuf_release(&sql);
	if (!st)
		return sql_fail(q);
	int rc = run_rows(q, st, 1, fn, ctx);
	sqlite3_finalize(st);
	return rc;
}

int cp_dbq_children_page(struct cp_dbq *q, uint32_t parent, uint32_t metric, int excl,
			 double min_incl, size_t offset, size_t limit, cp_dbq_row_fn fn, void *ctx)
{
	struct strbuf sql;
	strbuf_init(&sql);
	const char *col = excl ? "w.excl_sum" : "w.incl_sum";
	strbuf_addf(
	    &sql,
	    "WITH page(id) AS (SELECT s.id FROM scope s LEFT JOIN value w ON w.scope = s.id"
	    " AND w.metric = %u WHERE s.parent = %u AND (?1 < 0 OR abs(coalesce(w.incl_sum, 0))"
	    " >= ?1) ORDER BY w.scope IS NOT NULL AND %s IS NULL, coalesce(%s, 0) DESC, s.id"
	    " LIMIT %zu OFFSET %zu) SELECT " SCOPE_COLS
	    ", EXISTS(SELECT 1 FROM scope c WHERE c.parent = s.id), " VALUE_COLS
	    " FROM page JOIN scope s ON s.id = page.id LEFT JOIN value v ON v.scope = s.id"
	    " ORDER BY s.id, v.metric",
	    metric, parent, col, col, limit, offset);
	sqlite3_stmt *st = prepare(q, sql.buf);
	strbuf_release(&sql);
	if (!st)
		return sql_fail(q);
	sqlite3_bind_double(st, 1, min_incl);
	int rc = run_rows(q, st, 0, fn, ctx);
	sqlite3_finalize(st);
	return rc;
}

int cp_dbq_children_sums(struct cp_dbq *q, uint32_t parent, size_t *n, double *sums)
{
	memset(sums, 0, q->head->nmetrics * sizeof *sums);
	*n = 0;
	sqlite3_stmt *st = prepare(q, "SELECT count(*) FROM scope WHERE parent = ?1");
	if (!st)
		return sql_fail(q);
	sqlite3_bind_int64(st, 1, parent);
	if (sqlite3_step(st) == SQLITE_ROW)
		*n = (size_t)sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	st = prepare(q, "SELECT v.metric, total(v.incl_sum) FROM scope s JOIN value v ON v.scope"
			" = s.id WHERE s.parent = ?1 GROUP BY v.metric");
	if (!st)
		return sql_fail(q);
	sqlite3_bind_int64(st, 1, parent);
	int s;
	while ((s = sqlite3_step(st)) == SQLITE_ROW) {
		uint32_t m = col_id(st, 0);
		if (m < q->head->nmetrics)
			sums[m] = sqlite3_column_double(st, 1);
	}
	sqlite3_finalize(st);
	return s == SQLITE_DONE ? 0 : sql_fail(q);
}

/* ---- the bottom-up tables ------------------------------------------------------------ */

int cp_dbq_has_bu(const struct cp_dbq *q)
{
	return q->has_bu;
}

static void read_frame(sqlite3_stmt *st, struct cp_dbq_frame *f)
{
	uint32_t *v[] = {&f->scope, &f->key,	&f->caller, &f->outer, &f->kind,
			 &f->proc,  &f->module, &f->file,   &f->line};
	for (int i = 0; i < 9; i++)
		*v[i] = col_id(st, i);
	if (f->line == CP_DB_NONE)
		f->line = 0;
}

int cp_dbq_bu_frame(struct cp_dbq *q, uint32_t id, struct cp_dbq_frame *out)
{
	if (!q->frame)
		return cp_error(CP_ENOENT, "no bottom-up tables");
	sqlite3_bind_int64(q->frame, 1, id);
	int s = sqlite3_step(q->frame), rc = 0;
	if (s == SQLITE_ROW)
		read_frame(q->frame, out);
	else
		rc = s == SQLITE_DONE ? cp_error(CP_ENOENT, "no frame %u", id) : sql_fail(q);
	sqlite3_reset(q->frame);
	return rc;
}

/* Steps st (FRAME_COLS, an extra integer, then metric, incl, excl; ordered by scope) into
 * rows of (frame, values): fn for each unless acc, which adds a frame's exclusive values to
 * its outer frame's (buffered) row instead. */
struct bu_rows {
	struct cp_dbq_bu *v;
	double *vals;
	size_t n, alloc, nm;
};

static struct cp_dbq_bu *bu_row_new(struct bu_rows *r, const struct cp_dbq_frame *f, int extra)
{
	if (r->n == r->alloc) {
		r->alloc = r->alloc ? r->alloc * 2 : 64;
		r->v = xrealloc(r->v, r->alloc * sizeof *r->v);
		r->vals = xrealloc(r->vals, r->alloc * r->nm * 2 * sizeof *r->vals);
	}
	struct cp_dbq_bu *b = &r->v[r->n++];
	b->f = *f;
	b->has_callers = extra;
	memset(r->vals + (r->n - 1) * r->nm * 2, 0, r->nm * 2 * sizeof *r->vals);
	return b;
}

static struct cp_dbq_bu *bu_row_find(struct bu_rows *r, uint32_t scope)
{
	size_t lo = 0, hi = r->n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (r->v[mid].f.scope < scope)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < r->n && r->v[lo].f.scope == scope ? &r->v[lo] : NULL;
}

static int bu_collect(struct cp_dbq *q, sqlite3_stmt *st, int nested, struct bu_rows *r)
{
	struct cp_dbq_frame f, last = {.scope = CP_DB_NONE};
	struct cp_dbq_bu *cur = NULL;
	int s;
	while ((s = sqlite3_step(st)) == SQLITE_ROW) {
		read_frame(st, &f);
		if (f.scope != last.scope) {
			last = f;
			cur = !nested || f.outer == f.scope
				  ? bu_row_new(r, &f, sqlite3_column_int(st, 9))
				  : bu_row_find(r, f.outer);
		}
		uint32_t m = col_id(st, 10);
		if (!cur || m >= r->nm || q->head->metrics[m].kind != CP_DB_METRIC_RAW)
			continue;
		double *v = r->vals + (size_t)(cur - r->v) * r->nm * 2;
		double in = cp_db_col_real(st, 11), ex = cp_db_col_real(st, 12);
		if (!nested || f.outer == f.scope)
			v[m] += isnan(in) ? 0 : in;
		v[r->nm + m] += isnan(ex) ? 0 : ex;
	}
	return s == SQLITE_DONE ? 0 : sql_fail(q);
}

static int bu_run(struct cp_dbq *q, const char *text, uint32_t key, int nested, cp_dbq_bu_fn fn,
		  void *ctx)
{
	if (!q->has_bu)
		return cp_error(CP_ENOENT, "no bottom-up tables");
	sqlite3_stmt *st = prepare(q, text);
	if (!st)
		return sql_fail(q);
	if (key != CP_DB_NONE)
		sqlite3_bind_int64(st, 1, key);
	struct bu_rows r = {.nm = q->head->nmetrics};
	int rc = bu_collect(q, st, nested, &r);
	sqlite3_finalize(st);
	for (size_t i = 0; i < r.n && !rc; i++) {
		r.v[i].incl = r.vals + i * r.nm * 2;
		r.v[i].excl = r.v[i].incl + r.nm;
		rc = fn(ctx, &r.v[i]);
	}
	if (!rc && key != CP_DB_NONE && !r.n)
		rc = cp_error(CP_ENOENT, "no procedure %u", key);
	free(r.v);
	free(r.vals);
	return rc;
}

int cp_dbq_bu_procs(struct cp_dbq *q, uint32_t key, cp_dbq_bu_fn fn, void *ctx)
{
	return bu_run(q,
		      key == CP_DB_NONE
			  ? "SELECT p.key, p.key, NULL, p.key, s.kind, s.proc, s.module, s.file,"
			    " s.line, p.callers, v.metric, v.incl_sum, v.excl_sum FROM bu_proc p"
			    " JOIN scope s ON s.id = p.key LEFT JOIN bu_value v ON v.key = p.key"
			    " ORDER BY p.key, v.metric"
			  : "SELECT p.key, p.key, NULL, p.key, s.kind, s.proc, s.module, s.file,"
			    " s.line, p.callers, v.metric, v.incl_sum, v.excl_sum FROM bu_proc p"
			    " JOIN scope s ON s.id = p.key LEFT JOIN bu_value v ON v.key = p.key"
			    " WHERE p.key = ?1 ORDER BY v.metric",
		      key, 0, fn, ctx);
}

int cp_dbq_bu_outer(struct cp_dbq *q, uint32_t key, cp_dbq_bu_fn fn, void *ctx)
{
	return bu_run(q,
		      "SELECT " FRAME_COLS ", f.caller IS NOT NULL, v.metric, v.incl_sum,"
		      " v.excl_sum FROM bu_frame f JOIN scope s ON s.id = f.scope LEFT JOIN"
		      " value v ON v.scope = f.scope WHERE f.key = ?1 ORDER BY f.scope, v.metric",
		      key, 1, fn, ctx);
}

/* ---- the flat tables ------------------------------------------------------------------ */

int cp_dbq_has_flat(const struct cp_dbq *q)
{
	return q->has_flat;
}

static int group_step(struct cp_dbq *q, sqlite3_stmt *st, cp_dbq_group_fn fn, void *ctx, int *seen)
{
	size_t nm = q->head->nmetrics;
	double *vals = xcalloc(nm * 2 + 1, sizeof *vals);
	char kind[16] = "";
	struct cp_dbq_group g = {.id = CP_DB_NONE, .kind = kind, .incl = vals, .excl = vals + nm};
	int s, rc = 0, have = 0;
	while ((s = sqlite3_step(st)) == SQLITE_ROW) {
		uint32_t id = col_id(st, 0);
		if (!have || id != g.id) {
			if (have && (rc = fn(ctx, &g)))
				break;
			memset(vals, 0, nm * 2 * sizeof *vals);
			g.id = id;
			g.parent = col_id(st, 1);
			const unsigned char *k = sqlite3_column_text(st, 2);
			snprintf(kind, sizeof kind, "%s", k ? (const char *)k : "");
			g.key = col_id(st, 3);
			g.module = col_id(st, 4);
			g.file = col_id(st, 5);
			if (g.module != CP_DB_NONE && g.module >= q->head->nmodules)
				g.module = CP_DB_NONE;
			if (g.file != CP_DB_NONE && g.file >= q->head->nfiles)
				g.file = CP_DB_NONE;
			g.has_children = sqlite3_column_int(st, 6);
			have = *seen = 1;
		}
		uint32_t m = col_id(st, 7);
		if (m < nm && q->head->metrics[m].kind == CP_DB_METRIC_RAW) {
			double in = cp_db_col_real(st, 8), ex = cp_db_col_real(st, 9);
			vals[m] = isnan(in) ? 0 : in;
			vals[nm + m] = isnan(ex) ? 0 : ex;
		}
	}
	if (s != SQLITE_ROW && s != SQLITE_DONE)
		rc = sql_fail(q);
	else if (have && !rc)
		rc = fn(ctx, &g);
	free(vals);
	return rc;
}

int cp_dbq_flat_groups(struct cp_dbq *q, uint32_t id, uint32_t parent, uint32_t key,
		       cp_dbq_group_fn fn, void *ctx)
{
	if (!q->has_flat)
		return cp_error(CP_ENOENT, "no flat tables");
	const char *where = id != CP_DB_NONE	   ? "g.id = ?1"
			    : parent != CP_DB_NONE ? "g.parent = ?1"
						   : "g.key = ?1 AND g.kind = 'procedure'";
	char sql[512];
	snprintf(sql, sizeof sql,
		 "SELECT g.id, g.parent, g.kind, g.key, g.module, g.file, g.children, v.metric,"
		 " v.incl_sum, v.excl_sum FROM flat_group g LEFT JOIN flat_value v ON v.grp ="
		 " g.id WHERE %s ORDER BY g.id, v.metric",
		 where);
	sqlite3_stmt *st = prepare(q, sql);
	if (!st)
		return sql_fail(q);
	sqlite3_bind_int64(st, 1, id != CP_DB_NONE ? id : parent != CP_DB_NONE ? parent : key);
	int seen = 0, rc = group_step(q, st, fn, ctx, &seen);
	sqlite3_finalize(st);
	if (!rc && !seen && parent == CP_DB_NONE)
		rc = cp_error(CP_ENOENT, "no flat row");
	return rc;
}

int cp_dbq_flat_bodies(struct cp_dbq *q, uint32_t key, cp_dbq_body_fn fn, void *ctx)
{
	if (!q->has_flat)
		return cp_error(CP_ENOENT, "no flat tables");
	sqlite3_stmt *st = prepare(
	    q, "WITH RECURSIVE body(id, frame, k) AS (SELECT f.scope, f.scope, 0 FROM bu_frame f"
	       " WHERE f.key = ?1 UNION ALL SELECT s.id, b.frame, s.kind FROM body b JOIN scope s"
	       " ON s.parent = b.id WHERE b.id = b.frame OR b.k NOT IN (1, 5)) SELECT "
	       "b.frame, " SCOPE_COLS
	       ", v.metric, v.incl_sum FROM body b JOIN scope s ON s.id = b.id LEFT JOIN"
	       " value v ON v.scope = s.id ORDER BY s.id, b.frame, v.metric");
	if (!st)
		return sql_fail(q);
	sqlite3_bind_int64(st, 1, key);
	size_t nm = q->head->nmetrics;
	double *incl = xcalloc(nm + 1, sizeof *incl);
	struct cp_dbq_row row = {.stats = q->stats};
	struct cp_dbq_body b = {.id = CP_DB_NONE, .incl = incl};
	int s, rc = 0, have = 0;
	while ((s = sqlite3_step(st)) == SQLITE_ROW) {
		uint32_t id = col_id(st, 1), frame = col_id(st, 0);
		if (!have || id != b.id || frame != b.frame) {
			if (have && (rc = fn(ctx, &b)))
				break;
			memset(incl, 0, nm * sizeof *incl);
			b.frame = frame;
			read_scope_at(q, st, 1, &row);
			b.id = row.id;
			b.s = row.s;
			have = 1;
		}
		uint32_t m = col_id(st, 12);
		double v = cp_db_col_real(st, 13);
		if (m < nm && q->head->metrics[m].kind == CP_DB_METRIC_RAW)
			incl[m] = isnan(v) ? 0 : v;
	}
	if (s != SQLITE_ROW && s != SQLITE_DONE)
		rc = sql_fail(q);
	else if (have && !rc)
		rc = fn(ctx, &b);
	sqlite3_finalize(st);
	free(incl);
	return rc;
}

/* ---- the per-thread tables -------------------------------------------------------------- */

int cp_dbq_has_threads(const struct cp_dbq *q, int table)
{
	return (table == CP_DBQ_SCOPE || table == CP_DBQ_FLAT) && q->thr[table];
}

/* The entries of the current row of st (n, size, data) into pv: 0 or CP_EFORMAT. */
static int thr_decode(struct cp_dbq *q, sqlite3_stmt *st, struct cp_db_pvalues *pv)
{
	size_t nraw = cp_db_nraw(q->head), np = q->head->nprofiles;
	int64_t n = sqlite3_column_int64(st, 0), size = sqlite3_column_int64(st, 1);
	int packed = sqlite3_column_type(st, 1) != SQLITE_NULL;
	const void *data = sqlite3_column_blob(st, 2);
	size_t len = (size_t)sqlite3_column_bytes(st, 2);
	if (!packed)
		size = (int64_t)len;
	/* an entry takes 3..20 bytes encoded */
	if (n < 0 || (uint64_t)n > (uint64_t)np * nraw * 2 || size < 0 ||
	    (uint64_t)size > (uint64_t)n * 20 || (uint64_t)n * 3 > (uint64_t)size)
		return cp_db_corrupt(q->path, "bad per-thread row");
	uint8_t *raw = packed ? xmalloc((size_t)size + 1) : NULL;
	int bad = packed && cp_db_unzstd(data, len, raw, (size_t)size);
	if (!bad)
		bad = cp_db_entries_decode(packed ? raw : data, (size_t)size, (size_t)n, np,
					   nraw * 3, pv);
	free(raw);
	return bad ? cp_db_corrupt(q->path, "bad per-thread values") : 0;
}

int cp_dbq_threads_add(struct cp_dbq *q, int table, uint32_t id, double *incl, double *excl)
{
	if (!cp_dbq_has_threads(q, table))
		return cp_error(CP_ENOENT, "no per-thread table");
	sqlite3_stmt *st = q->thr[table];
	sqlite3_bind_int64(st, 1, id);
	int s = sqlite3_step(st), rc = 0;
	size_t nraw = cp_db_nraw(q->head);
	struct cp_db_pvalues pv = {0};
	if (s == SQLITE_ROW)
		rc = thr_decode(q, st, &pv);
	else if (s != SQLITE_DONE)
		rc = sql_fail(q);
	for (size_t i = 0; i < pv.n && !rc; i++) {
		const struct cp_db_value *v = &pv.v[i];
		size_t at = (size_t)v->scope * nraw + v->metric % nraw, kind = v->metric / nraw;
		if (incl && kind != 1)
			incl[at] += v->value;
		if (excl && kind != 0)
			excl[at] += v->value;
	}
	free(pv.v);
	sqlite3_reset(st);
	return rc;
}

int cp_dbq_bu_frames(struct cp_dbq *q, uint32_t key, cp_dbq_pair_fn fn, void *ctx)
{
	if (!q->has_bu)
		return cp_error(CP_ENOENT, "no bottom-up tables");
	sqlite3_stmt *st = prepare(q, "SELECT scope, outer FROM bu_frame WHERE key = ?1");
	if (!st)
		return sql_fail(q);
	sqlite3_bind_int64(st, 1, key);
	int s = SQLITE_DONE, rc = 0;
	while (!rc && (s = sqlite3_step(st)) == SQLITE_ROW)
		rc = fn(ctx, col_id(st, 0), col_id(st, 1));
	if (!rc && s != SQLITE_DONE)
		rc = sql_fail(q);
	sqlite3_finalize(st);
	return rc;
}
