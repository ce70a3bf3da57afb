/* Reading the profile database file (db-sqlite.c): read back whole, checking every id, and
 * refused when it is not a callpath database or has another schema version. */
#include "db/db-sqlite-impl.h"

#include "base/error.h"
#include "base/strbuf.h"
#include "base/xalloc.h"

#include <errno.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
	return cp_db_corrupt(r->path, what);
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
		r->rc = cp_db_corrupt(r->path, what);
}

static const char *col_text(sqlite3_stmt *st, int i)
{
	return (const char *)sqlite3_column_text(st, i);
}

#define col_id cp_db_col_id
#define col_real cp_db_col_real

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
static const char *const run_cpu_keys[] = {"process_cpu_ns", "startup_ns", "runtime_ns",
					   "images_cpu_unknown"};

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
		uint64_t *cpu[] = {&db->run.process_cpu_ns, &db->run.startup_ns,
				   &db->run.runtime_ns, &db->run.images_cpu_unknown};
		for (size_t i = 0; i < sizeof run_cpu_keys / sizeof run_cpu_keys[0]; i++)
			if (!strcmp(k, run_cpu_keys[i]))
				*cpu[i] = strtoull(v, NULL, 10);
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

static void read_structure(struct reader *r)
{
	struct cp_db *db = r->db;
	sqlite3_stmt *st = rprepare(r, "SELECT id, path, build_id, flags FROM module ORDER BY id");
	while (rstep(r, st)) {
		const char *hex = col_text(st, 2);
		uint8_t bid[32];
		size_t n = 0;
		for (; hex && hex[2 * n] && n < sizeof bid; n++) {
			int a = cp_hex_digit(hex[2 * n]),
			    b = a < 0 ? -1 : cp_hex_digit(hex[2 * n + 1]);
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
	cp_db_col_stat(st, i, db->nprofiles, s);
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
		if (cp_db_unzstd(z, zn, raw, (size_t)size) ||
		    cp_db_values_decode(raw, (size_t)size, (size_t)nv, db, &db->pvalues[p])) {
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

int cp_db_read_head(struct cp_db *db, const char *path)
{
	struct reader r;
	reader_open(&r, db, path);
	read_meta(&r);
	read_sources(&r);
	read_structure(&r);
	read_metrics(&r);
	read_profiles(&r);
	return reader_close(&r);
}

int cp_db_read_sources(struct cp_db *db, const char *path)
{
	struct reader r;
	reader_open(&r, db, path);
	if (!r.rc)
		read_sources(&r);
	return reader_close(&r);
}
