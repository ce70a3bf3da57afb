/* The profile database file: SQLite, schema in docs/format.md ("Profile database"). The only
 * code that talks to SQLite and zstd. Written to a temporary file in the same directory in
 * one transaction, then renamed over the target; read back whole, checking every id. */
#include "db/db-impl.h"

#include "base/error.h"
#include "base/strbuf.h"
#include "base/xalloc.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zstd.h>

/* PRAGMA application_id: "CPDB" */
#define CP_DB_APPLICATION_ID 0x43504442

static const char schema[] =
    "CREATE TABLE meta(key TEXT NOT NULL, value TEXT);\n"
    "CREATE TABLE module(id INTEGER PRIMARY KEY, path TEXT NOT NULL, name TEXT NOT NULL,"
    " build_id TEXT, flags INTEGER NOT NULL);\n"
    "CREATE TABLE file(id INTEGER PRIMARY KEY, path TEXT NOT NULL);\n"
    "CREATE TABLE procedure(id INTEGER PRIMARY KEY, name TEXT NOT NULL, linkage TEXT,"
    " module INTEGER NOT NULL, file INTEGER, line INTEGER NOT NULL, flags INTEGER NOT NULL,"
    " entry INTEGER NOT NULL);\n"
    "CREATE TABLE scope_kind(id INTEGER PRIMARY KEY, name TEXT NOT NULL);\n"
    "CREATE TABLE scope(id INTEGER PRIMARY KEY, parent INTEGER, kind INTEGER NOT NULL,"
    " depth INTEGER NOT NULL, proc INTEGER, module INTEGER, file INTEGER,"
    " line INTEGER NOT NULL, line_lo INTEGER NOT NULL, line_hi INTEGER NOT NULL,"
    " addr INTEGER NOT NULL);\n"
    "CREATE TABLE metric(id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, unit TEXT NOT NULL,"
    " kind TEXT NOT NULL, formula TEXT, description TEXT, source INTEGER NOT NULL,"
    " mechanism INTEGER NOT NULL, period INTEGER NOT NULL, samples INTEGER NOT NULL);\n"
    "CREATE TABLE profile(id INTEGER PRIMARY KEY, pid INTEGER, ppid INTEGER, tid INTEGER,"
    " gen INTEGER, tidx INTEGER, rank INTEGER, host TEXT, thread_name TEXT, command TEXT,"
    " flags INTEGER, start_ns INTEGER, end_ns INTEGER, cpu_ns INTEGER,"
    " unwind_complete INTEGER, unwind_partial INTEGER, unwind_failed INTEGER,"
    " dropped INTEGER, frames INTEGER);\n"
    "CREATE TABLE profile_samples(profile INTEGER NOT NULL, metric INTEGER NOT NULL,"
    " samples INTEGER NOT NULL, PRIMARY KEY(profile, metric)) WITHOUT ROWID;\n"
    "CREATE TABLE value(scope INTEGER NOT NULL, metric INTEGER NOT NULL,"
    " incl_sum REAL, incl_mean REAL, incl_min REAL, incl_max REAL, incl_stddev REAL,"
    " incl_argmax INTEGER, incl_count INTEGER NOT NULL,"
    " excl_sum REAL, excl_mean REAL, excl_min REAL, excl_max REAL, excl_stddev REAL,"
    " excl_argmax INTEGER, excl_count INTEGER NOT NULL, self_sum REAL,"
    " PRIMARY KEY(scope, metric)) WITHOUT ROWID;\n"
    "CREATE TABLE profile_values(profile INTEGER PRIMARY KEY, nvalues INTEGER NOT NULL,"
    " size INTEGER NOT NULL, data BLOB NOT NULL);\n"
    "CREATE TABLE source(name TEXT PRIMARY KEY, size INTEGER NOT NULL,"
    " mtime_ns INTEGER NOT NULL, head_hash INTEGER NOT NULL);\n";

/* Created after the rows (faster), with the views. */
static const char schema_tail[] =
    "CREATE INDEX scope_parent ON scope(parent);\n"
    "CREATE VIEW scope_names AS SELECT s.id AS id, s.parent AS parent, k.name AS kind,"
    " s.depth AS depth, p.name AS procedure, m.name AS module, f.path AS file,"
    " s.line AS line, s.line_lo AS line_lo, s.line_hi AS line_hi, s.addr AS addr,"
    " CASE s.kind"
    "  WHEN 0 THEN '<program root>'"
    "  WHEN 1 THEN p.name"
    "  WHEN 2 THEN p.name || ' (inlined)'"
    "  WHEN 3 THEN 'loop at ' || coalesce(replace(f.path, rtrim(f.path, replace(f.path, '/',"
    " '')), ''), '?') || ':' || s.line_lo || '-' || s.line_hi"
    "  WHEN 4 THEN coalesce(replace(f.path, rtrim(f.path, replace(f.path, '/', '')), ''), '?')"
    " || ':' || s.line"
    "  ELSE '<partial call paths>' END AS label"
    " FROM scope s JOIN scope_kind k ON k.id = s.kind"
    " LEFT JOIN procedure p ON p.id = s.proc LEFT JOIN module m ON m.id = s.module"
    " LEFT JOIN file f ON f.id = s.file;\n"
    "CREATE VIEW scope_values AS SELECT n.id AS scope, n.kind AS kind, n.label AS label,"
    " n.procedure AS procedure, n.file AS file, n.depth AS depth, mt.name AS metric,"
    " mt.unit AS unit, v.incl_sum AS incl_sum, v.excl_sum AS excl_sum, v.self_sum AS self_sum,"
    " v.incl_mean AS incl_mean, v.incl_min AS incl_min, v.incl_max AS incl_max,"
    " v.incl_stddev AS incl_stddev, v.incl_argmax AS incl_argmax, v.incl_count AS incl_count"
    " FROM value v JOIN scope_names n ON n.id = v.scope JOIN metric mt ON mt.id = v.metric;\n";

/* ---- errors -------------------------------------------------------------------------- */

static int sql_error(sqlite3 *db, const char *path, const char *what)
{
	return cp_error(CP_EIO, "DB: %s %s: %s", what, path, db ? sqlite3_errmsg(db) : "no memory");
}

static int corrupt(const char *path, const char *what)
{
	return cp_error(CP_EFORMAT, "DB: %s: truncated or corrupt (%s)", path, what);
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
static void encode_values(const struct cp_db_pvalues *pv, struct strbuf *b)
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

static int decode_values(const uint8_t *p, size_t len, size_t n, const struct cp_db *db,
			 struct cp_db_pvalues *pv)
{
	const uint8_t *end = p + len;
	size_t nraw = cp_db_nraw(db);
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
		if (scope >= db->nscopes || metric >= nraw)
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

/* ---- writing ------------------------------------------------------------------------------ */

struct writer {
	sqlite3 *sql;
	const char *path;
	int rc;
};

static int exec(struct writer *w, const char *text)
{
	if (w->rc)
		return w->rc;
	char *msg = NULL;
	if (sqlite3_exec(w->sql, text, NULL, NULL, &msg) != SQLITE_OK) {
		w->rc = cp_error(CP_EIO, "DB: writing %s: %s", w->path, msg ? msg : "?");
		sqlite3_free(msg);
	}
	return w->rc;
}

static sqlite3_stmt *prepare(struct writer *w, const char *text)
{
	sqlite3_stmt *st = NULL;
	if (!w->rc && sqlite3_prepare_v2(w->sql, text, -1, &st, NULL) != SQLITE_OK)
		w->rc = sql_error(w->sql, w->path, "writing");
	return st;
}

static void step(struct writer *w, sqlite3_stmt *st)
{
	if (w->rc || !st)
		return;
	if (sqlite3_step(st) != SQLITE_DONE)
		w->rc = sql_error(w->sql, w->path, "writing");
	sqlite3_reset(st); /* every statement binds all its parameters for each row */
}

static void bind_text(sqlite3_stmt *st, int i, const char *s)
{
	if (s)
		sqlite3_bind_text(st, i, s, -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(st, i);
}

static void bind_id(sqlite3_stmt *st, int i, uint32_t id)
{
	if (id == CP_DB_NONE)
		sqlite3_bind_null(st, i);
	else
		sqlite3_bind_int64(st, i, id);
}

static void bind_real(sqlite3_stmt *st, int i, double x)
{
	if (isnan(x))
		sqlite3_bind_null(st, i);
	else
		sqlite3_bind_double(st, i, x);
}

static void meta(struct writer *w, sqlite3_stmt *st, const char *key, const char *value)
{
	if (!value || !st)
		return;
	sqlite3_bind_text(st, 1, key, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 2, value, -1, SQLITE_TRANSIENT);
	step(w, st);
}

static void metaf(struct writer *w, sqlite3_stmt *st, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void metaf(struct writer *w, sqlite3_stmt *st, const char *key, const char *fmt, ...)
{
	char buf[128];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	meta(w, st, key, buf);
}

static void write_meta(struct writer *w, const struct cp_db *db)
{
	sqlite3_stmt *st = prepare(w, "INSERT INTO meta(key, value) VALUES (?, ?)");
	const struct cp_db_run *r = &db->run;
	meta(w, st, "format", "callpath profile database");
	metaf(w, st, "schema_version", "%d", CP_DB_SCHEMA_VERSION);
	meta(w, st, "written_by", "callpath " CALLPATH_VERSION);
	meta(w, st, "command", r->command);
	meta(w, st, "host", r->host);
	meta(w, st, "callpath_version", r->callpath_version);
	meta(w, st, "measurement_dir", r->measurement_dir);
	metaf(w, st, "start_ns", "%llu", (unsigned long long)r->start_ns);
	if (r->start_ns) {
		time_t t = (time_t)(r->start_ns / 1000000000ull);
		struct tm tm;
		char buf[64];
		gmtime_r(&t, &tm);
		strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
		meta(w, st, "start_time", buf);
	}
	metaf(w, st, "duration_s", "%.9g", r->duration_s);
	metaf(w, st, "nprocs", "%zu", r->nprocs);
	metaf(w, st, "nforked", "%zu", r->nforked);
	metaf(w, st, "nexeced", "%zu", r->nexeced);
	metaf(w, st, "nprofiles", "%zu", db->nprofiles);
	for (size_t i = 0; i < r->nnotes; i++)
		meta(w, st, "note", r->notes[i]);
	for (size_t i = 0; i < r->nwarnings; i++)
		meta(w, st, "warning", r->warnings[i]);
	uint64_t tot[5] = {0};
	for (size_t i = 0; i < db->nprofiles; i++) {
		const struct cp_db_profile *p = &db->profiles[i];
		tot[0] += p->unwind_complete;
		tot[1] += p->unwind_partial;
		tot[2] += p->unwind_failed;
		tot[3] += p->dropped;
		tot[4] += p->frames;
	}
	static const char *const names[] = {"unwind_complete", "unwind_partial", "unwind_failed",
					    "dropped", "frames"};
	for (int i = 0; i < 5; i++)
		metaf(w, st, names[i], "%llu", (unsigned long long)tot[i]);
	sqlite3_finalize(st);
}

static void write_sources(struct writer *w, const struct cp_db *db)
{
	sqlite3_stmt *st =
	    prepare(w, "INSERT OR REPLACE INTO source(name, size, mtime_ns, head_hash) "
		       "VALUES (?, ?, ?, ?)");
	for (size_t i = 0; st && i < db->run.nsources; i++) {
		const struct cp_db_source *s = &db->run.sources[i];
		bind_text(st, 1, s->name);
		sqlite3_bind_int64(st, 2, (sqlite3_int64)s->size);
		sqlite3_bind_int64(st, 3, s->mtime_ns);
		sqlite3_bind_int64(st, 4, (sqlite3_int64)s->head_hash);
		step(w, st);
	}
	sqlite3_finalize(st);
}

static void write_structure(struct writer *w, const struct cp_db *db)
{
	sqlite3_stmt *st = prepare(w, "INSERT INTO module VALUES (?, ?, ?, ?, ?)");
	for (size_t i = 0; st && i < db->nmodules; i++) {
		const struct cp_db_module *m = &db->modules[i];
		char hex[2 * sizeof m->build_id + 1] = "";
		for (uint32_t k = 0; k < m->build_id_len && k < sizeof m->build_id; k++)
			snprintf(hex + 2 * k, 3, "%02x", m->build_id[k]);
		sqlite3_bind_int64(st, 1, (int64_t)i);
		bind_text(st, 2, m->path);
		bind_text(st, 3, m->name);
		bind_text(st, 4, m->build_id_len ? hex : NULL);
		sqlite3_bind_int64(st, 5, m->flags);
		step(w, st);
	}
	sqlite3_finalize(st);
	st = prepare(w, "INSERT INTO file VALUES (?, ?)");
	for (size_t i = 0; st && i < db->nfiles; i++) {
		sqlite3_bind_int64(st, 1, (int64_t)i);
		bind_text(st, 2, db->files[i].path);
		step(w, st);
	}
	sqlite3_finalize(st);
	st = prepare(w, "INSERT INTO procedure VALUES (?, ?, ?, ?, ?, ?, ?, ?)");
	for (size_t i = 0; st && i < db->nprocs; i++) {
		const struct cp_db_proc *p = &db->procs[i];
		sqlite3_bind_int64(st, 1, (int64_t)i);
		bind_text(st, 2, p->name);
		bind_text(st, 3, p->linkage);
		bind_id(st, 4, p->module);
		bind_id(st, 5, p->file);
		sqlite3_bind_int64(st, 6, p->line);
		sqlite3_bind_int64(st, 7, p->flags);
		sqlite3_bind_int64(st, 8, (int64_t)p->entry);
		step(w, st);
	}
	sqlite3_finalize(st);
	st = prepare(w, "INSERT INTO scope_kind VALUES (?, ?)");
	for (int k = CP_DBK_ROOT; st && k <= CP_DBK_PARTIAL; k++) {
		sqlite3_bind_int(st, 1, k);
		bind_text(st, 2, cp_db_kind_name((enum cp_db_kind)k));
		step(w, st);
	}
	sqlite3_finalize(st);
	st = prepare(w, "INSERT INTO scope VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
	for (size_t i = 0; st && i < db->nscopes; i++) {
		const struct cp_db_scope *s = &db->scopes[i];
		sqlite3_bind_int64(st, 1, (int64_t)i);
		bind_id(st, 2, s->parent);
		sqlite3_bind_int(st, 3, s->kind);
		sqlite3_bind_int64(st, 4, s->depth);
		bind_id(st, 5, s->proc);
		bind_id(st, 6, s->module);
		bind_id(st, 7, s->file);
		sqlite3_bind_int64(st, 8, s->line);
		sqlite3_bind_int64(st, 9, s->line_lo);
		sqlite3_bind_int64(st, 10, s->line_hi);
		sqlite3_bind_int64(st, 11, (int64_t)s->addr);
		step(w, st);
	}
	sqlite3_finalize(st);
}

static void write_metrics_profiles(struct writer *w, const struct cp_db *db)
{
	sqlite3_stmt *st = prepare(w, "INSERT INTO metric VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
	for (size_t i = 0; st && i < db->nmetrics; i++) {
		const struct cp_db_metric *m = &db->metrics[i];
		sqlite3_bind_int64(st, 1, (int64_t)i);
		bind_text(st, 2, m->name);
		bind_text(st, 3, m->unit ? m->unit : "");
		bind_text(st, 4, m->kind == CP_DB_METRIC_DERIVED ? "derived" : "raw");
		bind_text(st, 5, m->formula);
		bind_text(st, 6, m->description);
		sqlite3_bind_int64(st, 7, m->source);
		sqlite3_bind_int64(st, 8, m->mechanism);
		sqlite3_bind_int64(st, 9, (int64_t)m->period);
		sqlite3_bind_int64(st, 10, (int64_t)m->samples);
		step(w, st);
	}
	sqlite3_finalize(st);
	st = prepare(w, "INSERT INTO profile VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
			"?, ?, ?, ?)");
	sqlite3_stmt *ss = prepare(w, "INSERT INTO profile_samples VALUES (?, ?, ?)");
	size_t nraw = cp_db_nraw(db);
	for (size_t i = 0; st && ss && i < db->nprofiles; i++) {
		const struct cp_db_profile *p = &db->profiles[i];
		int k = 1;
		sqlite3_bind_int64(st, k++, (int64_t)i);
		sqlite3_bind_int64(st, k++, p->pid);
		sqlite3_bind_int64(st, k++, p->ppid);
		sqlite3_bind_int64(st, k++, p->tid);
		sqlite3_bind_int64(st, k++, p->gen);
		sqlite3_bind_int64(st, k++, p->tidx);
		sqlite3_bind_int64(st, k++, p->rank);
		bind_text(st, k++, p->host);
		bind_text(st, k++, p->thread_name);
		bind_text(st, k++, p->command);
		sqlite3_bind_int64(st, k++, p->flags);
		sqlite3_bind_int64(st, k++, (int64_t)p->start_ns);
		sqlite3_bind_int64(st, k++, (int64_t)p->end_ns);
		sqlite3_bind_int64(st, k++, (int64_t)p->cpu_ns);
		sqlite3_bind_int64(st, k++, (int64_t)p->unwind_complete);
		sqlite3_bind_int64(st, k++, (int64_t)p->unwind_partial);
		sqlite3_bind_int64(st, k++, (int64_t)p->unwind_failed);
		sqlite3_bind_int64(st, k++, (int64_t)p->dropped);
		sqlite3_bind_int64(st, k++, (int64_t)p->frames);
		step(w, st);
		for (size_t m = 0; m < nraw && m < CP_DB_MAX_METRICS; m++) {
			if (!p->samples[m])
				continue;
			sqlite3_bind_int64(ss, 1, (int64_t)i);
			sqlite3_bind_int64(ss, 2, (int64_t)m);
			sqlite3_bind_int64(ss, 3, (int64_t)p->samples[m]);
			step(w, ss);
		}
	}
	sqlite3_finalize(st);
	sqlite3_finalize(ss);
}

static void bind_stat(sqlite3_stmt *st, int i, const struct cp_db_stat *s)
{
	bind_real(st, i, s->sum);
	bind_real(st, i + 1, s->mean);
	bind_real(st, i + 2, s->min);
	bind_real(st, i + 3, s->max);
	bind_real(st, i + 4, s->stddev);
	bind_id(st, i + 5, s->count ? s->argmax : CP_DB_NONE);
	sqlite3_bind_int64(st, i + 6, s->count);
}

/* Value rows go VALUE_BATCH at a time through one statement (fewer VM runs). */
#define VALUE_BATCH 32
#define VALUE_COLS 17

static sqlite3_stmt *prepare_values(struct writer *w, int nrows)
{
	struct strbuf q;
	strbuf_init(&q);
	strbuf_addstr(&q, "INSERT INTO value VALUES ");
	for (int r = 0; r < nrows; r++) {
		strbuf_addstr(&q, r ? ",(" : "(");
		for (int c = 0; c < VALUE_COLS; c++)
			strbuf_addstr(&q, c ? ",?" : "?");
		strbuf_addch(&q, ')');
	}
	sqlite3_stmt *st = prepare(w, q.buf);
	strbuf_release(&q);
	return st;
}

static void write_values(struct writer *w, const struct cp_db *db)
{
	size_t nm = db->nmetrics;
	double *self = xmalloc((db->nscopes * nm + 1) * sizeof *self);
	cp_db_self_sums(db, self);
	sqlite3_stmt *batch = prepare_values(w, VALUE_BATCH), *one = prepare_values(w, 1);
	uint32_t pend[VALUE_BATCH][2];
	int npend = 0;
	for (size_t s = 0; batch && one && s <= db->nscopes && !w->rc; s++) {
		for (size_t m = 0; s < db->nscopes && m < nm; m++) {
			const struct cp_db_stat *in =
			    cp_db_stat_get(db, (uint32_t)s, (uint32_t)m, 1);
			const struct cp_db_stat *ex =
			    cp_db_stat_get(db, (uint32_t)s, (uint32_t)m, 0);
			if (!in->count && !ex->count)
				continue;
			pend[npend][0] = (uint32_t)s;
			pend[npend][1] = (uint32_t)m;
			if (++npend < VALUE_BATCH)
				continue;
			for (int r = 0; r < npend; r++) {
				int b = r * VALUE_COLS;
				size_t ps = pend[r][0], pm = pend[r][1];
				sqlite3_bind_int64(batch, b + 1, (int64_t)ps);
				sqlite3_bind_int64(batch, b + 2, (int64_t)pm);
				bind_stat(batch, b + 3,
					  cp_db_stat_get(db, (uint32_t)ps, (uint32_t)pm, 1));
				bind_stat(batch, b + 10,
					  cp_db_stat_get(db, (uint32_t)ps, (uint32_t)pm, 0));
				bind_real(batch, b + 17, self[ps * nm + pm]);
			}
			step(w, batch);
			npend = 0;
		}
		if (s == db->nscopes) { /* the rest one by one */
			for (int r = 0; r < npend; r++) {
				size_t ps = pend[r][0], pm = pend[r][1];
				sqlite3_bind_int64(one, 1, (int64_t)ps);
				sqlite3_bind_int64(one, 2, (int64_t)pm);
				bind_stat(one, 3,
					  cp_db_stat_get(db, (uint32_t)ps, (uint32_t)pm, 1));
				bind_stat(one, 10,
					  cp_db_stat_get(db, (uint32_t)ps, (uint32_t)pm, 0));
				bind_real(one, 17, self[ps * nm + pm]);
				step(w, one);
			}
		}
	}
	sqlite3_finalize(batch);
	sqlite3_finalize(one);
	free(self);
	sqlite3_stmt *st;
	st = prepare(w, "INSERT INTO profile_values VALUES (?, ?, ?, ?)");
	struct strbuf raw;
	strbuf_init(&raw);
	void *z = NULL;
	size_t zcap = 0;
	for (size_t p = 0; st && p < db->nprofiles && !w->rc; p++) {
		strbuf_clear(&raw);
		encode_values(&db->pvalues[p], &raw);
		size_t bound = ZSTD_compressBound(raw.len);
		if (bound > zcap) {
			zcap = bound;
			z = xrealloc(z, zcap);
		}
		size_t zn = ZSTD_compress(z, zcap, raw.buf ? raw.buf : "", raw.len, 3);
		if (ZSTD_isError(zn)) {
			w->rc = cp_error(CP_EINTERNAL, "DB: writing %s: zstd: %s", w->path,
					 ZSTD_getErrorName(zn));
			break;
		}
		sqlite3_bind_int64(st, 1, (int64_t)p);
		sqlite3_bind_int64(st, 2, (int64_t)db->pvalues[p].n);
		sqlite3_bind_int64(st, 3, (int64_t)raw.len);
		sqlite3_bind_blob(st, 4, z, (int)zn, SQLITE_STATIC);
		step(w, st);
	}
	free(z);
	strbuf_release(&raw);
	sqlite3_finalize(st);
}

/* The reader rejects references to missing rows: refuse to write a file it could not read
 * (a producer bug) rather than find out later. */
static int check_refs(const struct cp_db *db, const char *path)
{
	for (size_t i = 0; i < db->nprocs; i++) {
		const struct cp_db_proc *p = &db->procs[i];
		if (p->module >= db->nmodules || (p->file != CP_DB_NONE && p->file >= db->nfiles))
			return cp_error(
			    CP_EINTERNAL,
			    "DB: writing %s: procedure %zu refers to a missing module or file",
			    path, i);
	}
	for (size_t i = 1; i < db->nscopes; i++) {
		const struct cp_db_scope *s = &db->scopes[i];
		if ((s->proc != CP_DB_NONE && s->proc >= db->nprocs) ||
		    (s->module != CP_DB_NONE && s->module >= db->nmodules) ||
		    (s->file != CP_DB_NONE && s->file >= db->nfiles))
			return cp_error(
			    CP_EINTERNAL,
			    "DB: writing %s: scope %zu refers to a missing procedure, module "
			    "or file",
			    path, i);
	}
	return 0;
}

int cp_db_write(struct cp_db *db, const char *path)
{
	int rc = cp_db_finish(db);
	if (!rc)
		rc = check_refs(db, path);
	if (rc)
		return rc;
	struct strbuf tmp;
	strbuf_init(&tmp);
	strbuf_addf(&tmp, "%s.tmp.XXXXXX", path);
	int fd = mkstemp(tmp.buf);
	if (fd < 0) {
		rc = cp_error(CP_EIO, "DB: cannot create a temporary file next to %s: %s", path,
			      strerror(errno));
		strbuf_release(&tmp);
		return rc;
	}
	/* mkstemp makes it 0600: give it the mode of the file it replaces, or what the umask
	 * allows */
	struct stat old;
	mode_t mode;
	if (!stat(path, &old)) {
		mode = old.st_mode & 07777;
	} else {
		mode_t mask = umask(0);
		umask(mask);
		mode = 0666 & ~mask;
	}
	fchmod(fd, mode);
	close(fd);
	struct writer w = {.path = path};
	if (sqlite3_open_v2(tmp.buf, &w.sql, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL) !=
	    SQLITE_OK) {
		w.rc = sql_error(w.sql, path, "writing");
		goto out;
	}
	char pragmas[256];
	snprintf(pragmas, sizeof pragmas,
		 "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; PRAGMA page_size=8192;"
		 "PRAGMA locking_mode=EXCLUSIVE; PRAGMA cache_size=-65536;"
		 "PRAGMA application_id=%d; PRAGMA user_version=%d;",
		 CP_DB_APPLICATION_ID, CP_DB_SCHEMA_VERSION);
	exec(&w, pragmas);
	exec(&w, "BEGIN");
	exec(&w, schema);
	write_meta(&w, db);
	write_sources(&w, db);
	write_structure(&w, db);
	write_metrics_profiles(&w, db);
	write_values(&w, db);
	exec(&w, schema_tail);
	exec(&w, "COMMIT");
out:
	if (w.sql && sqlite3_close(w.sql) != SQLITE_OK && !w.rc)
		w.rc = sql_error(w.sql, path, "closing");
	if (!w.rc) {
		fd = open(tmp.buf, O_RDONLY);
		if (fd >= 0) {
			fsync(fd);
			close(fd);
		}
		if (rename(tmp.buf, path))
			w.rc = cp_error(CP_EIO, "DB: cannot rename %s to %s: %s", tmp.buf, path,
					strerror(errno));
	}
	if (w.rc)
		unlink(tmp.buf);
	strbuf_release(&tmp);
	return w.rc;
}

/* ---- reading ------------------------------------------------------------------------------ */

static const char sqlite_magic[16] = "SQLite format 3";

/* 1 = SQLite file, 0 = not, <0 = cannot read (error set). */
static int sqlite_header(const char *path)
{
	char buf[100];
	FILE *f = fopen(path, "rb");
	if (!f)
		return cp_error(errno == ENOENT ? CP_ENOENT : CP_EIO, "DB: cannot open %s: %s",
				path, strerror(errno));
	size_t n = fread(buf, 1, sizeof buf, f);
	fclose(f);
	if (n < sizeof buf || memcmp(buf, sqlite_magic, 16))
		return 0;
	uint32_t app = (uint32_t)(unsigned char)buf[68] << 24 |
		       (uint32_t)(unsigned char)buf[69] << 16 |
		       (uint32_t)(unsigned char)buf[70] << 8 | (unsigned char)buf[71];
	return app == CP_DB_APPLICATION_ID ? 1 : 0;
}

int cp_db_is_database(const char *path)
{
	int r = sqlite_header(path);
	cp_error_clear();
	return r == 1;
}

struct reader {
	sqlite3 *sql;
	const char *path;
	struct cp_db *db;
	int rc;
};

static int sql_corrupt(struct reader *r)
{
	char what[256];
	snprintf(what, sizeof what, "sqlite: %s", sqlite3_errmsg(r->sql));
	return corrupt(r->path, what);
}

static sqlite3_stmt *rprepare(struct reader *r, const char *text)
{
	sqlite3_stmt *st = NULL;
	if (r->rc)
		return NULL;
	if (sqlite3_prepare_v2(r->sql, text, -1, &st, NULL) != SQLITE_OK)
		r->rc = sql_corrupt(r);
	return st;
}

/* SQLITE_ROW, or 0 at the end / on error (r->rc set). */
static int rstep(struct reader *r, sqlite3_stmt *st)
{
	if (r->rc || !st)
		return 0;
	int s = sqlite3_step(st);
	if (s == SQLITE_ROW)
		return 1;
	if (s != SQLITE_DONE)
		r->rc = sql_corrupt(r);
	return 0;
}

static void bad(struct reader *r, const char *what)
{
	if (!r->rc)
		r->rc = corrupt(r->path, what);
}

static const char *col_text(sqlite3_stmt *st, int i)
{
	return (const char *)sqlite3_column_text(st, i);
}

static uint32_t col_id(sqlite3_stmt *st, int i)
{
	if (sqlite3_column_type(st, i) == SQLITE_NULL)
		return CP_DB_NONE;
	int64_t v = sqlite3_column_int64(st, i);
	return v < 0 || v >= CP_DB_NONE ? CP_DB_NONE - 1 : (uint32_t)v;
}

static double col_real(sqlite3_stmt *st, int i)
{
	if (sqlite3_column_type(st, i) == SQLITE_NULL)
		return NAN;
	return sqlite3_column_double(st, i);
}

static uint64_t col_u64(sqlite3_stmt *st, int i)
{
	return (uint64_t)sqlite3_column_int64(st, i);
}

static int64_t pragma_int(struct reader *r, const char *pragma)
{
	sqlite3_stmt *st = rprepare(r, pragma);
	int64_t v = rstep(r, st) ? sqlite3_column_int64(st, 0) : -1;
	sqlite3_finalize(st);
	return v;
}

static const char *const run_keys[] = {"measurement_dir", "command", "host", "callpath_version"};

static void read_meta(struct reader *r)
{
	struct cp_db *db = r->db;
	sqlite3_stmt *st = rprepare(r, "SELECT key, value FROM meta ORDER BY rowid");
	while (rstep(r, st)) {
		const char *k = col_text(st, 0), *v = col_text(st, 1);
		if (!k || !v)
			continue;
		const char **fields[] = {&db->run.measurement_dir, &db->run.command, &db->run.host,
					 &db->run.callpath_version};
		for (size_t i = 0; i < sizeof run_keys / sizeof run_keys[0]; i++)
			if (!strcmp(k, run_keys[i]))
				*fields[i] = cp_db_intern(db, v);
		if (!strcmp(k, "start_ns"))
			db->run.start_ns = strtoull(v, NULL, 10);
		else if (!strcmp(k, "duration_s"))
			db->run.duration_s = strtod(v, NULL);
		else if (!strcmp(k, "nprocs"))
			db->run.nprocs = strtoull(v, NULL, 10);
		else if (!strcmp(k, "nforked"))
			db->run.nforked = strtoull(v, NULL, 10);
		else if (!strcmp(k, "nexeced"))
			db->run.nexeced = strtoull(v, NULL, 10);
		else if (!strcmp(k, "note"))
			cp_db_note_add(db, v);
		else if (!strcmp(k, "warning"))
			cp_db_warning_add(db, v);
	}
	sqlite3_finalize(st);
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static void read_structure(struct reader *r)
{
	struct cp_db *db = r->db;
	sqlite3_stmt *st = rprepare(r, "SELECT id, path, build_id, flags FROM module ORDER BY id");
	while (rstep(r, st)) {
		const char *hex = col_text(st, 2);
		uint8_t bid[32];
		size_t n = 0;
		for (; hex && hex[2 * n] && n < sizeof bid; n++) {
			int a = hexval(hex[2 * n]), b = a < 0 ? -1 : hexval(hex[2 * n + 1]);
			if (b < 0)
				break;
			bid[n] = (uint8_t)(a << 4 | b);
		}
		const char *path = col_text(st, 1);
		if (!path || (hex && hex[2 * n]) ||
		    cp_db_module(db, path, bid, n, (uint32_t)sqlite3_column_int64(st, 3)) !=
			col_id(st, 0))
			bad(r, "bad module row");
	}
	sqlite3_finalize(st);
	st = rprepare(r, "SELECT id, path FROM file ORDER BY id");
	while (rstep(r, st))
		if (!col_text(st, 1) || cp_db_file(db, col_text(st, 1)) != col_id(st, 0))
			bad(r, "bad file row");
	sqlite3_finalize(st);
	st = rprepare(r, "SELECT id, name, linkage, module, file, line, flags, entry FROM "
			 "procedure ORDER BY id");
	while (rstep(r, st)) {
		struct cp_db_proc p = {
		    .name = col_text(st, 1),
		    .linkage = col_text(st, 2),
		    .module = col_id(st, 3),
		    .file = col_id(st, 4),
		    .line = (uint32_t)sqlite3_column_int64(st, 5),
		    .flags = (uint32_t)sqlite3_column_int64(st, 6),
		    .entry = col_u64(st, 7),
		};
		if (!p.name || p.module >= db->nmodules ||
		    (p.file != CP_DB_NONE && p.file >= db->nfiles) ||
		    cp_db_proc(db, &p) != col_id(st, 0))
			bad(r, "bad procedure row");
	}
	sqlite3_finalize(st);
}

static void read_scopes(struct reader *r)
{
	struct cp_db *db = r->db;
	sqlite3_stmt *st =
	    rprepare(r, "SELECT id, parent, kind, proc, module, file, line, line_lo, "
			"line_hi, addr FROM scope ORDER BY id");
	while (rstep(r, st)) {
		uint32_t id = col_id(st, 0), parent = col_id(st, 1);
		struct cp_db_scope s = {
		    .kind = (uint8_t)sqlite3_column_int(st, 2),
		    .proc = col_id(st, 3),
		    .module = col_id(st, 4),
		    .file = col_id(st, 5),
		    .line = (uint32_t)sqlite3_column_int64(st, 6),
		    .line_lo = (uint32_t)sqlite3_column_int64(st, 7),
		    .line_hi = (uint32_t)sqlite3_column_int64(st, 8),
		    .addr = col_u64(st, 9),
		};
		int kind = sqlite3_column_int(st, 2);
		if (id == 0) {
			if (parent != CP_DB_NONE || kind != CP_DBK_ROOT)
				bad(r, "bad root scope");
			continue;
		}
		if ((s.proc != CP_DB_NONE && s.proc >= db->nprocs) ||
		    (s.module != CP_DB_NONE && s.module >= db->nmodules) ||
		    (s.file != CP_DB_NONE && s.file >= db->nfiles) || kind < 0 ||
		    kind > CP_DBK_PARTIAL || cp_db_scope_child(db, parent, &s) != id)
			bad(r, "bad scope row");
	}
	sqlite3_finalize(st);
}

static uint32_t lookup_metric(void *ctx, const char *name, size_t len)
{
	const struct cp_db *db = ctx;
	for (size_t i = 0; i < db->nmetrics; i++)
		if (strlen(db->metrics[i].name) == len && !memcmp(db->metrics[i].name, name, len))
			return (uint32_t)i;
	return UINT32_MAX;
}

static void read_metrics(struct reader *r)
{
	struct cp_db *db = r->db;
	sqlite3_stmt *st = rprepare(r, "SELECT id, name, unit, kind, formula, description, source, "
				       "mechanism, period, samples FROM metric ORDER BY id");
	while (rstep(r, st) && !r->rc) {
		struct cp_db_metric m = {
		    .name = col_text(st, 1),
		    .unit = col_text(st, 2),
		    .formula = col_text(st, 4),
		    .description = col_text(st, 5),
		    .source = (uint32_t)sqlite3_column_int64(st, 6),
		    .mechanism = (uint32_t)sqlite3_column_int64(st, 7),
		    .period = col_u64(st, 8),
		    .samples = col_u64(st, 9),
		};
		const char *kind = col_text(st, 3);
		if (!m.name || !kind || cp_db_metric_find(db, m.name) != CP_DB_NONE) {
			bad(r, "bad metric row");
			break;
		}
		uint32_t id;
		if (!strcmp(kind, "raw")) {
			id = cp_db_metric_add(db, &m);
		} else if (!strcmp(kind, "derived") && m.formula) {
			struct cp_expr *e;
			if (cp_expr_parse(m.formula, lookup_metric, db, &e)) {
				bad(r, "bad formula of a derived metric");
				break;
			}
			m.kind = CP_DB_METRIC_DERIVED;
			id = cp_db_metric_add_derived(db, &m, e);
		} else {
			id = CP_DB_NONE;
		}
		if (id != col_id(st, 0))
			bad(r, "bad metric row");
		else
			db->metrics[id].samples = m.samples;
	}
	sqlite3_finalize(st);
}

static void read_profiles(struct reader *r)
{
	struct cp_db *db = r->db;
	sqlite3_stmt *st = rprepare(r, "SELECT * FROM profile ORDER BY id");
	while (rstep(r, st)) {
		if (sqlite3_column_count(st) < 19) {
			bad(r, "bad profile table");
			break;
		}
		struct cp_db_profile p;
		memset(&p, 0, sizeof p);
		int k = 1;
		p.pid = sqlite3_column_int(st, k++);
		p.ppid = sqlite3_column_int(st, k++);
		p.tid = sqlite3_column_int(st, k++);
		p.gen = (uint32_t)sqlite3_column_int64(st, k++);
		p.tidx = (uint32_t)sqlite3_column_int64(st, k++);
		p.rank = sqlite3_column_int(st, k++);
		p.host = col_text(st, k++);
		p.thread_name = col_text(st, k++);
		p.command = col_text(st, k++);
		p.flags = (uint32_t)sqlite3_column_int64(st, k++);
		p.start_ns = col_u64(st, k++);
		p.end_ns = col_u64(st, k++);
		p.cpu_ns = col_u64(st, k++);
		p.unwind_complete = col_u64(st, k++);
		p.unwind_partial = col_u64(st, k++);
		p.unwind_failed = col_u64(st, k++);
		p.dropped = col_u64(st, k++);
		p.frames = col_u64(st, k++);
		if (cp_db_profile_add(db, &p) != col_id(st, 0))
			bad(r, "bad profile row");
	}
	sqlite3_finalize(st);
	st = rprepare(r, "SELECT profile, metric, samples FROM profile_samples");
	while (rstep(r, st)) {
		uint32_t p = col_id(st, 0), m = col_id(st, 1);
		if (p >= db->nprofiles || m >= cp_db_nraw(db))
			bad(r, "bad profile_samples row");
		else
			db->profiles[p].samples[m] = col_u64(st, 2);
	}
	sqlite3_finalize(st);
}

static void read_stat(sqlite3_stmt *st, int i, const struct cp_db *db, struct cp_db_stat *s)
{
	s->sum = col_real(st, i);
	s->mean = col_real(st, i + 1);
	s->min = col_real(st, i + 2);
	s->max = col_real(st, i + 3);
	s->stddev = col_real(st, i + 4);
	s->argmax = col_id(st, i + 5);
	if (s->argmax != CP_DB_NONE && s->argmax >= db->nprofiles)
		s->argmax = CP_DB_NONE;
	int64_t c = sqlite3_column_int64(st, i + 6);
	s->count = c < 0 ? 0 : c > (int64_t)db->nprofiles ? (uint32_t)db->nprofiles : (uint32_t)c;
}

static void read_values(struct reader *r)
{
	struct cp_db *db = r->db;
	size_t nm = db->nmetrics, n = db->nscopes * nm * 2;
	free(db->stats);
	db->stats = xcalloc(n + 1, sizeof *db->stats);
	for (size_t i = 0; i < n; i++)
		db->stats[i].argmax = CP_DB_NONE;
	sqlite3_stmt *st = rprepare(r, "SELECT * FROM value");
	while (rstep(r, st)) {
		uint32_t s = col_id(st, 0), m = col_id(st, 1);
		if (s >= db->nscopes || m >= nm || sqlite3_column_count(st) < 16) {
			bad(r, "bad value row");
			break;
		}
		read_stat(st, 2, db, &db->stats[((size_t)s * nm + m) * 2 + 1]);
		read_stat(st, 9, db, &db->stats[((size_t)s * nm + m) * 2]);
	}
	sqlite3_finalize(st);
	st = rprepare(r, "SELECT profile, nvalues, size, data FROM profile_values");
	void *raw = NULL;
	while (rstep(r, st)) {
		uint32_t p = col_id(st, 0);
		int64_t nv = sqlite3_column_int64(st, 1), size = sqlite3_column_int64(st, 2);
		const void *z = sqlite3_column_blob(st, 3);
		size_t zn = (size_t)sqlite3_column_bytes(st, 3);
		/* an entry takes 3..20 bytes encoded */
		if (p >= db->nprofiles || db->pvalues[p].v || nv < 0 || size < 0 ||
		    (uint64_t)size > (uint64_t)nv * 20 || (uint64_t)nv * 3 > (uint64_t)size) {
			bad(r, "bad profile_values row");
			break;
		}
		free(raw);
		raw = xmalloc((size_t)size + 1);
		size_t got = ZSTD_decompress(raw, (size_t)size, z ? z : "", zn);
		if (ZSTD_isError(got) || got != (size_t)size ||
		    decode_values(raw, got, (size_t)nv, db, &db->pvalues[p])) {
			bad(r, "bad per-profile values");
			break;
		}
	}
	free(raw);
	sqlite3_finalize(st);
}

static void read_sources(struct reader *r)
{
	sqlite3_stmt *st =
	    rprepare(r, "SELECT name, size, mtime_ns, head_hash FROM source ORDER BY name");
	while (rstep(r, st)) {
		struct cp_db_source s = {.name = col_text(st, 0),
					 .size = col_u64(st, 1),
					 .mtime_ns = sqlite3_column_int64(st, 2),
					 .head_hash = col_u64(st, 3)};
		if (!s.name) {
			bad(r, "source without a name");
			break;
		}
		cp_db_source_add(r->db, &s);
	}
	sqlite3_finalize(st);
}

/* Opens path for reading into r (db initialized) after checking that it is a callpath
 * database of our schema version; r->rc set on failure. */
static void reader_open(struct reader *r, struct cp_db *db, const char *path)
{
	memset(db, 0, sizeof *db);
	*r = (struct reader){.path = path, .db = db};
	int h = sqlite_header(path);
	if (h <= 0) {
		r->rc = h < 0 ? h : cp_error(CP_EFORMAT, "DB: %s: not a callpath database", path);
		return;
	}
	cp_db_init(db);
	if (sqlite3_open_v2(path, &r->sql, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, NULL) !=
	    SQLITE_OK) {
		r->rc = cp_error(CP_EIO, "DB: cannot open %s: %s", path,
				 r->sql ? sqlite3_errmsg(r->sql) : "no memory");
		return;
	}
	/* a database from elsewhere is untrusted: no functions from its schema, no writes, and
	 * our tables must be tables (not views that could run anything) */
	sqlite3_db_config(r->sql, SQLITE_DBCONFIG_DEFENSIVE, 1, NULL);
	sqlite3_exec(r->sql, "PRAGMA trusted_schema=OFF", NULL, NULL, NULL);
	int64_t app = pragma_int(r, "PRAGMA application_id");
	int64_t ver = pragma_int(r, "PRAGMA user_version");
	if (r->rc)
		return;
	if (app != CP_DB_APPLICATION_ID) {
		r->rc = cp_error(CP_EFORMAT, "DB: %s: not a callpath database", path);
		return;
	}
	if (ver != CP_DB_SCHEMA_VERSION)
		r->rc = cp_error(CP_EFORMAT,
				 "DB: %s: schema version %lld, this callpath reads %d (run "
				 "`callpath analyze` on the measurement directory again)",
				 path, (long long)ver, CP_DB_SCHEMA_VERSION);
}

/* Closes r; on failure releases the database. */
static int reader_close(struct reader *r)
{
	if (r->sql)
		sqlite3_close(r->sql);
	if (r->rc) {
		cp_db_release(r->db);
		memset(r->db, 0, sizeof *r->db);
	}
	return r->rc;
}

int cp_db_read(struct cp_db *db, const char *path)
{
	struct reader r;
	reader_open(&r, db, path);
	if (r.rc)
		return reader_close(&r);
	if (pragma_int(&r, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN "
			   "('meta', 'module', 'file', 'procedure', 'scope_kind', 'scope', "
			   "'metric', 'profile', 'profile_samples', 'value', 'profile_values', "
			   "'source')") != 12)
		bad(&r, "tables missing");
	read_meta(&r);
	read_sources(&r);
	read_structure(&r);
	read_scopes(&r);
	read_metrics(&r);
	read_profiles(&r);
	read_values(&r);
	if (reader_close(&r))
		return r.rc;
	db->finished = 1;
	return 0;
}

int cp_db_read_sources(struct cp_db *db, const char *path)
{
	struct reader r;
	reader_open(&r, db, path);
	if (!r.rc)
		read_sources(&r);
	return reader_close(&r);
}
