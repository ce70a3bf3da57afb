/* Writing the profile database file (db-sqlite.c): the schema, then every table in one
 * transaction, into a temporary file in the same directory renamed over the target
 * (base/atomic-file.h). */
#include "db/db-sqlite-impl.h"

#include "base/atomic-file.h"
#include "base/error.h"
#include "base/strbuf.h"
#include "base/xalloc.h"

#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

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
		w->rc = cp_db_sql_error(w->sql, w->path, "writing");
	return st;
}

static void step(struct writer *w, sqlite3_stmt *st)
{
	if (w->rc || !st)
		return;
	if (sqlite3_step(st) != SQLITE_DONE)
		w->rc = cp_db_sql_error(w->sql, w->path, "writing");
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
	metaf(w, st, "process_cpu_ns", "%llu", (unsigned long long)r->process_cpu_ns);
	metaf(w, st, "startup_ns", "%llu", (unsigned long long)r->startup_ns);
	metaf(w, st, "runtime_ns", "%llu", (unsigned long long)r->runtime_ns);
	metaf(w, st, "images_cpu_unknown", "%llu", (unsigned long long)r->images_cpu_unknown);
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
		cp_db_values_encode(&db->pvalues[p], &raw);
		size_t zn;
		if ((w->rc = cp_db_zstd(raw.buf, raw.len, &z, &zcap, &zn, w->path)))
			break;
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

struct finisher {
	struct cp_db *db;
	int rc;
	char *error;
	double cpu; /* thread CPU time */
};

static double cpu_now(clockid_t clock)
{
	struct timespec ts;
	clock_gettime(clock, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void *finish_main(void *arg)
{
	struct finisher *f = arg;
	double t0 = cpu_now(CLOCK_THREAD_CPUTIME_ID);
	f->rc = cp_db_finish(f->db);
	f->cpu = cpu_now(CLOCK_THREAD_CPUTIME_ID) - t0;
	if (f->rc)
		f->error = xstrdup(cp_error_message());
	return NULL;
}

/* cp_db_finish of an unfinished database runs on a thread of its own while the tables it
 * does not touch (modules, files, procedures, scopes) are written. */
static int finish_join(pthread_t tid, struct finisher *f, int started, int rc)
{
	if (!started)
		return rc;
	pthread_join(tid, NULL);
	if (!rc && f->rc)
		rc = cp_error(f->rc, "%s", f->error ? f->error : "?");
	free(f->error);
	return rc;
}

int cp_db_write(struct cp_db *db, const char *path)
{
	int rc = check_refs(db, path);
	if (rc)
		return rc;
	struct finisher fin = {db, 0, NULL, 0};
	pthread_t tid = 0;
	int started = !db->finished && !pthread_create(&tid, NULL, finish_main, &fin);
	if (!started && (rc = cp_db_finish(db)))
		return rc;
	struct cp_atomic_file af;
	if ((rc = cp_atomic_begin(&af, path, CP_ATOMIC_SYNC))) {
		finish_join(tid, &fin, started, rc);
		return cp_error_prefix(rc, "DB");
	}
	close(af.fd); /* SQLite opens it by name */
	af.fd = -1;
	struct writer w = {.path = path};
	if (sqlite3_open_v2(af.tmp, &w.sql, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL) !=
	    SQLITE_OK) {
		w.rc = cp_db_sql_error(w.sql, path, "writing");
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
	double t0 = cpu_now(CLOCK_THREAD_CPUTIME_ID), w0 = cpu_now(CLOCK_MONOTONIC);
	write_meta(&w, db);
	write_sources(&w, db);
	write_structure(&w, db);
	double t1 = cpu_now(CLOCK_THREAD_CPUTIME_ID), w1 = cpu_now(CLOCK_MONOTONIC);
	w.rc = finish_join(tid, &fin, started, w.rc);
	started = 0;
	double w2 = cpu_now(CLOCK_MONOTONIC);
	write_metrics_profiles(&w, db);
	write_values(&w, db);
	if (!w.rc)
		w.rc = cp_db_write_bu(w.sql, db, path);
	exec(&w, schema_tail);
	exec(&w, "COMMIT");
	if (getenv("CALLPATH_ANALYZE_STATS"))
		fprintf(stderr,
			"write: structure tables %.2f CPU s (wall %.2f) beside finish %.2f CPU s "
			"(waited %.2f), then values %.2f CPU s (wall %.2f)\n",
			t1 - t0, w1 - w0, fin.cpu, w2 - w1, cpu_now(CLOCK_THREAD_CPUTIME_ID) - t1,
			cpu_now(CLOCK_MONOTONIC) - w2);
out:
	w.rc = finish_join(tid, &fin, started, w.rc);
	if (w.sql && sqlite3_close(w.sql) != SQLITE_OK && !w.rc)
		w.rc = cp_db_sql_error(w.sql, path, "closing");
	return cp_atomic_commit(&af, w.rc);
}
