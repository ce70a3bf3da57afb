/* The per-thread tables of a profile database (docs/format.md, "The per-thread tables"):
 * the profiles' values scope-major, as HPCToolkit's "cct-major" file holds them beside the
 * profile-major one, so that a viewer reads one scope's value in every thread with one row
 * instead of every profile's blob. scope_thread: per scope, each profile's inclusive and
 * exclusive value of every raw metric (the values the statistics of `value` are made of);
 * flat_thread: the same of the flat view's module, file and procedure rows (flat_value
 * per profile). Entries are encoded as profile_values' are (db-sqlite.c), the profile in
 * place of the scope and a key in place of the metric: metric (inclusive), nraw + metric
 * (exclusive), 2 nraw + metric (both, equal).
 *
 * The scopes are written in ranges whose entries fit in cp_db_threads_budget (each scope's
 * entries are counted by its statistics: `count` profiles with a nonzero value), one walk
 * over the profiles per range (the walks of cp_db_finish's statistics, db-finish.c). */
#include "db/db-sqlite-bu.h"

#include "base/error.h"
#include "base/strbuf.h"
#include "base/xalloc.h"

#include <stdlib.h>
#include <string.h>

static const char scope_schema[] =
    "CREATE TABLE scope_thread(scope INTEGER PRIMARY KEY, n INTEGER NOT NULL, size INTEGER,"
    " data BLOB NOT NULL);\n";
static const char flat_schema[] =
    "CREATE TABLE flat_thread(grp INTEGER PRIMARY KEY, n INTEGER NOT NULL, size INTEGER,"
    " data BLOB NOT NULL);\n";

/* Entries in memory at once (16 bytes each: 128 MB). */
size_t cp_db_threads_budget = (size_t)1 << 23;
/* Blobs this long or longer are compressed when that makes them shorter. */
#define THR_ZMIN 64
/* flat_thread is summed in dense arrays (rows x profiles x 2 x raw metrics doubles): a
 * database needing more than this many has no flat_thread (the viewer falls back). */
#define THR_FLAT_MAX ((size_t)1 << 24)

struct thr {
	const struct bu *b;
	const struct flat_map *map;
	size_t nraw, np;
	uint32_t *count;	  /* per scope: its entries (the statistics' counts) */
	uint32_t *at;		  /* per scope of the range: its next slot */
	struct cp_db_value *slot; /* the range's entries (profile in .scope, key in .metric) */
	uint32_t lo, hi;	  /* the range */
	uint32_t *end;		  /* per scope of the range: the end of its slots */
	int incl;
	double *gacc; /* flat rows: [((row - 1) * np + profile) * 2 * nraw + key], or NULL */
};

static double *gslot(const struct thr *t, uint32_t g, uint32_t p)
{
	return t->gacc + ((size_t)(g - 1) * t->np + p) * 2 * t->nraw;
}

/* A frame's inclusive value v into its flat rows as db-sqlite-flat.c's groups_sum adds
 * them: inclusive to the rows of which it is the outermost frame, and its exclusive value
 * (inclusive less its callees') to all of its rows. */
static void flat_add(struct thr *t, uint32_t s, uint32_t m, double v, uint32_t p)
{
	const struct cp_db *db = t->b->db;
	const struct flat_map *fm = t->map;
	size_t nr = t->nraw;
	uint32_t up = t->b->frame[db->scopes[s].parent];
	for (int callee = 0; callee < 2; callee++, s = up, v = -v) {
		if (s == CP_DB_NONE)
			break;
		if (db->scopes[s].kind == CP_DBK_PARTIAL) {
			if (fm->partial) {
				double *a = gslot(t, fm->partial, p);
				a[m] += v;
				a[nr + m] += v;
			}
			continue;
		}
		for (int lv = 0; lv < 3; lv++) {
			uint32_t g = fm->of[lv][s];
			if (!g || g > fm->ngroups)
				continue;
			double *a = gslot(t, g, p);
			if (!callee && (fm->outer[s] & (1u << lv)))
				a[m] += v;
			a[nr + m] += v;
		}
	}
}

static void thr_emit(void *ctx, uint32_t s, uint32_t m, double v, uint32_t p)
{
	struct thr *t = ctx;
	if (s < t->lo || s >= t->hi || t->at[s] >= t->end[s])
		return;
	uint32_t key = t->incl ? m : (uint32_t)t->nraw + m;
	t->slot[t->at[s]++] = (struct cp_db_value){p, key, v};
	if (t->incl && t->gacc && t->b->frame[s] == s)
		flat_add(t, s, m, v, p);
}

/* Every profile, inclusive then exclusive: a scope's entries come in (profile, key) order. */
static void walk_all(struct thr *t, struct cp_db_walk *w)
{
	for (uint32_t p = 0; p < t->np; p++) {
		t->incl = 1;
		cp_db_walk_profile(w, p, 1, thr_emit, t);
		t->incl = 0;
		cp_db_walk_profile(w, p, 0, thr_emit, t);
	}
}

/* The entries of one row, in (profile, key) order, with each profile's inclusive and
 * exclusive value of a metric that are equal (a statement's, a frame's that calls nothing)
 * made one entry of key 2 nraw + metric: in place, the new count. */
static size_t thr_pair(struct cp_db_value *v, size_t n, size_t nraw)
{
	struct cp_db_value tmp[3][CP_DB_MAX_METRICS];
	size_t o = 0;
	for (size_t i = 0, j, e; i < n; i = j) {
		for (j = i; j < n && v[j].scope == v[i].scope; j++)
			;
		for (e = i; e < j && v[e].metric < nraw; e++)
			;
		size_t nt[3] = {0, 0, 0}, a = i, b = e;
		while (a < e || b < j) {
			uint32_t ma = a < e ? v[a].metric : UINT32_MAX;
			uint32_t mb = b < j ? v[b].metric - (uint32_t)nraw : UINT32_MAX;
			if (ma == mb && v[a].value == v[b].value) {
				tmp[2][nt[2]] = v[a];
				tmp[2][nt[2]++].metric += 2 * (uint32_t)nraw;
				a++, b++;
			} else if (ma <= mb) {
				tmp[0][nt[0]++] = v[a++];
			} else {
				tmp[1][nt[1]++] = v[b++];
			}
		}
		for (int k = 0; k < 3; k++)
			for (size_t x = 0; x < nt[k]; x++)
				v[o++] = tmp[k][x];
	}
	return o;
}

struct blobw {
	sqlite3 *sql;
	sqlite3_stmt *st;
	const char *path;
	struct strbuf raw;
	void *z;
	size_t zcap;
};

/* One row: id, n entries, then the entries raw (size NULL) or compressed (size = raw). */
static int put_blob(struct blobw *bw, uint32_t id, struct cp_db_value *v, size_t n, size_t nraw)
{
	n = thr_pair(v, n, nraw);
	struct cp_db_pvalues pv = {v, n, n, 1};
	size_t zn = 0;
	strbuf_clear(&bw->raw);
	cp_db_values_encode(&pv, &bw->raw);
	int rc = bw->raw.len >= THR_ZMIN
		     ? cp_db_zstd(bw->raw.buf, bw->raw.len, &bw->z, &bw->zcap, &zn, bw->path)
		     : 0;
	if (rc)
		return rc;
	int packed = zn && zn < bw->raw.len;
	sqlite3_bind_int64(bw->st, 1, id);
	sqlite3_bind_int64(bw->st, 2, (int64_t)n);
	if (packed)
		sqlite3_bind_int64(bw->st, 3, (int64_t)bw->raw.len);
	else
		sqlite3_bind_null(bw->st, 3);
	sqlite3_bind_blob(bw->st, 4, packed ? bw->z : bw->raw.buf, (int)(packed ? zn : bw->raw.len),
			  SQLITE_STATIC);
	rc =
	    sqlite3_step(bw->st) == SQLITE_DONE ? 0 : cp_db_sql_error(bw->sql, bw->path, "writing");
	sqlite3_reset(bw->st);
	return rc;
}

static int blobw_begin(struct blobw *bw, const char *schema, const char *insert)
{
	int rc = cp_db_bu_exec(bw->sql, schema, bw->path);
	if (!rc && sqlite3_prepare_v2(bw->sql, insert, -1, &bw->st, NULL) != SQLITE_OK)
		rc = cp_db_sql_error(bw->sql, bw->path, "writing");
	return rc;
}

/* The scopes of [lo, hi): entries filled by a walk, then written. */
static int write_range(struct thr *t, struct cp_db_walk *w, struct blobw *bw)
{
	size_t total = 0;
	for (uint32_t s = t->lo; s < t->hi; s++) {
		t->at[s] = (uint32_t)total;
		total += t->count[s];
		t->end[s] = (uint32_t)total;
	}
	t->slot = xrealloc(t->slot, (total + 1) * sizeof *t->slot);
	walk_all(t, w);
	int rc = 0;
	for (uint32_t s = t->lo; s < t->hi && !rc; s++) {
		uint32_t first = t->end[s] - t->count[s];
		if (t->at[s] > first) /* the walk's entries (as many as counted, unless corrupt) */
			rc = put_blob(bw, s, t->slot + first, t->at[s] - first, t->nraw);
	}
	return rc;
}

static int write_scopes(struct thr *t, struct cp_db_walk *w, struct blobw *bw)
{
	const struct cp_db *db = t->b->db;
	size_t ns = db->nscopes;
	for (uint32_t s = 0; s < ns; s++) /* the walks' nonzero values, as the statistics count */
		for (uint32_t m = 0; m < t->nraw; m++)
			t->count[s] +=
			    cp_db_stat_get(db, s, m, 1)->count + cp_db_stat_get(db, s, m, 0)->count;
	int rc = blobw_begin(bw, scope_schema, "INSERT INTO scope_thread VALUES(?1, ?2, ?3, ?4)");
	for (size_t lo = 0, hi; lo < ns && !rc; lo = hi) {
		size_t total = t->count[lo];
		for (hi = lo + 1; hi < ns && total + t->count[hi] <= cp_db_threads_budget; hi++)
			total += t->count[hi];
		t->lo = (uint32_t)lo;
		t->hi = (uint32_t)hi;
		rc = write_range(t, w, bw);
	}
	sqlite3_finalize(bw->st);
	bw->st = NULL;
	return rc;
}

/* flat_thread from the sums flat_add made. */
static int write_flat(struct thr *t, struct blobw *bw)
{
	size_t nk = 2 * t->nraw;
	struct cp_db_value *v = xmalloc((t->np * nk + 1) * sizeof *v);
	int rc = blobw_begin(bw, flat_schema, "INSERT INTO flat_thread VALUES(?1, ?2, ?3, ?4)");
	for (uint32_t g = 1; g <= t->map->ngroups && !rc; g++) {
		size_t n = 0;
		for (uint32_t p = 0; p < t->np; p++)
			for (size_t k = 0; k < nk; k++) {
				double x = gslot(t, g, p)[k];
				if (x != 0)
					v[n++] = (struct cp_db_value){p, (uint32_t)k, x};
			}
		if (n)
			rc = put_blob(bw, g, v, n, t->nraw);
	}
	sqlite3_finalize(bw->st);
	bw->st = NULL;
	free(v);
	return rc;
}

int cp_db_write_threads(sqlite3 *sql, const struct bu *b, const struct flat_map *map,
			const char *path)
{
	const struct cp_db *db = b->db;
	struct thr t = {.b = b, .map = map, .nraw = cp_db_nraw(db), .np = db->nprofiles};
	size_t ns = db->nscopes + 1, gn = map->ngroups * t.np * 2 * t.nraw;
	t.count = xcalloc(ns, sizeof *t.count);
	t.at = xcalloc(ns, sizeof *t.at);
	t.end = xcalloc(ns, sizeof *t.end);
	if (gn <= THR_FLAT_MAX)
		t.gacc = xcalloc(gn + 1, sizeof *t.gacc);
	struct blobw bw = {.sql = sql, .path = path};
	strbuf_init(&bw.raw);
	struct cp_db_walk *w = cp_db_walk_new(db);
	int rc = write_scopes(&t, w, &bw);
	if (!rc && t.gacc)
		rc = write_flat(&t, &bw);
	cp_db_walk_free(w);
	strbuf_release(&bw.raw);
	free(bw.z);
	free(t.count);
	free(t.at);
	free(t.end);
	free(t.slot);
	free(t.gacc);
	return rc;
}
