/* The flat view's top levels in the database file (docs/format.md, "The flat tables"):
 * load modules, files and procedures with the values report's flat view gives them
 * (report/view-flat.c), so that a viewer serves them without building the view; below a
 * procedure the viewer reads the bodies of its frames (src/view/model-flat.c).
 *
 * A row's inclusive value counts each sample once: it is the sum of the inclusive values of
 * the frames that map to the row and have no enclosing frame mapping to it. Its exclusive
 * value is the cost of the samples whose innermost frame maps to it: a frame's inclusive
 * value minus its callees'. A procedure is listed under the file its paths show first (in
 * the order of the top-down view's leaves), as report does. */
#include "db/db-sqlite-bu.h"

#include "base/error.h"
#include "base/xalloc.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char flat_schema[] =
    "CREATE TABLE flat_group(id INTEGER PRIMARY KEY, parent INTEGER NOT NULL,"
    " kind TEXT NOT NULL, key INTEGER, module INTEGER, file INTEGER,"
    " children INTEGER NOT NULL);\n"
    "CREATE TABLE flat_value(grp INTEGER NOT NULL, metric INTEGER NOT NULL, incl_sum REAL,"
    " excl_sum REAL, PRIMARY KEY(grp, metric)) WITHOUT ROWID;\n";

static const char flat_index[] = "CREATE INDEX flat_group_parent ON flat_group(parent);\n";

enum { G_MODULE, G_FILE, G_PROC, G_PARTIAL };
static const char *const group_kinds[] = {"module", "file", "procedure", "partial"};

struct group {
	uint32_t parent, kind, key, module, file;
	int children;
};

struct flat {
	const struct bu *b;
	size_t nm;
	double *incl;	  /* per scope and raw metric: inclusive sums */
	double *fexcl;	  /* per frame: inclusive minus its callees' */
	uint32_t *pfile;  /* per key: the procedure's file */
	uint32_t *of[3];  /* per frame: its module, file and procedure group */
	uint8_t *outer;	  /* per frame: bit lv when no enclosing frame has its group of level lv */
	uint32_t partial; /* the <partial call paths> group, 0 if none */
	struct group *g;  /* id - 1 */
	double *gv;	  /* per group: nm inclusive, nm exclusive */
	size_t ng, ag;
	struct cp_hashtab tab; /* modules by path, files by (module group, file) */
};

static int any_cost(const struct flat *f, const double *v)
{
	for (size_t m = 0; m < f->nm; m++)
		if (v[m] != 0 && !isnan(v[m]))
			return 1;
	return 0;
}

/* Pass 0 of report's flat view for one leaf: the file of each procedure frame on its path
 * (where its outermost inlined frame was inlined, else where the path goes on in it). */
static void pfile_walk(struct flat *f, uint32_t i, uint32_t file)
{
	const struct cp_db *db = f->b->db;
	for (; i != 0 && i < db->nscopes; i = db->scopes[i].parent) {
		const struct cp_db_scope *s = &db->scopes[i];
		if (s->kind == CP_DBK_INLINE) {
			file = s->file;
		} else if (s->kind == CP_DBK_PROC) {
			uint32_t k = f->b->key[i];
			if (f->pfile[k] == CP_DB_NONE)
				f->pfile[k] = file;
			file = s->file;
		}
	}
}

static void pfile_compute(struct flat *f)
{
	const struct cp_db *db = f->b->db;
	size_t nm = f->nm;
	for (uint32_t i = 1; i < db->nscopes; i++) {
		const struct cp_db_scope *s = &db->scopes[i];
		if (s->first_child == CP_DB_NONE && any_cost(f, f->incl + (size_t)i * nm))
			pfile_walk(f, i, s->kind == CP_DBK_STMT ? s->file : CP_DB_NONE);
	}
	/* then the <no line> leaves: own costs of scopes with children */
	double *own = xcalloc(db->nscopes * nm + 1, sizeof *own);
	for (size_t p = 0; p < db->nprofiles; p++)
		for (size_t k = 0; k < db->pvalues[p].n; k++) {
			const struct cp_db_value *v = &db->pvalues[p].v[k];
			if (v->scope < db->nscopes && v->metric < nm)
				own[(size_t)v->scope * nm + v->metric] += v->value;
		}
	for (uint32_t i = 1; i < db->nscopes; i++)
		if (db->scopes[i].first_child != CP_DB_NONE && any_cost(f, own + (size_t)i * nm))
			pfile_walk(f, i, CP_DB_NONE);
	free(own);
}

static uint32_t group_new(struct flat *f, uint32_t parent, uint32_t kind, uint32_t key,
			  uint32_t module, uint32_t file)
{
	if (f->ng == f->ag) {
		f->ag = f->ag ? f->ag * 2 : 64;
		f->g = xrealloc(f->g, f->ag * sizeof *f->g);
		f->gv = xrealloc(f->gv, f->ag * f->nm * 2 * sizeof *f->gv);
	}
	f->g[f->ng] = (struct group){parent, kind, key, module, file, kind != G_PARTIAL};
	memset(f->gv + f->ng * f->nm * 2, 0, f->nm * 2 * sizeof *f->gv);
	return (uint32_t)++f->ng;
}

struct gkey {
	uint32_t kind, parent, file;
	const char *path;
};

static int gkey_eq(const void *ctx, uint32_t idx, const void *k)
{
	const struct flat *f = ctx;
	const struct group *g = &f->g[idx];
	const struct gkey *x = k;
	const struct cp_db *db = f->b->db;
	if (g->kind != x->kind)
		return 0;
	if (x->kind == G_FILE)
		return g->parent == x->parent && g->file == x->file;
	const char *p = g->module < db->nmodules ? db->modules[g->module].path : NULL;
	return p == x->path || (p && x->path && !strcmp(p, x->path));
}

static uint32_t group_get(struct flat *f, const struct gkey *k, uint32_t module)
{
	uint64_t h = cp_hash_mix(cp_hash_mix(k->kind, k->parent), k->file);
	if (k->path)
		h = cp_hash_mix(h, cp_hash_str(k->path));
	uint32_t i = cp_hashtab_find(&f->tab, h, gkey_eq, f, k);
	if (i != CP_HASH_NONE)
		return i + 1;
	uint32_t id = group_new(f, k->parent, k->kind, CP_DB_NONE, module,
				k->kind == G_FILE ? k->file : CP_DB_NONE);
	cp_hashtab_insert(&f->tab, h, id - 1);
	return id;
}

/* The groups of every procedure frame, in scope order. */
static void groups_assign(struct flat *f, uint32_t *proc_group)
{
	const struct cp_db *db = f->b->db;
	for (uint32_t i = 1; i < db->nscopes; i++) {
		const struct cp_db_scope *s = &db->scopes[i];
		if (s->kind != CP_DBK_PROC)
			continue;
		const char *path = s->module < db->nmodules ? db->modules[s->module].path : NULL;
		struct gkey mk = {G_MODULE, 0, CP_DB_NONE, path};
		uint32_t m = group_get(f, &mk, s->module < db->nmodules ? s->module : CP_DB_NONE);
		uint32_t k = f->b->key[i];
		struct gkey fk = {G_FILE, m, f->pfile[k], NULL};
		uint32_t fl = group_get(f, &fk, f->g[m - 1].module);
		if (!proc_group[k])
			proc_group[k] =
			    group_new(f, fl, G_PROC, k, f->g[m - 1].module, f->pfile[k]);
		f->of[G_MODULE][i] = m;
		f->of[G_FILE][i] = fl;
		f->of[G_PROC][i] = proc_group[k];
	}
}

static void add_to(struct flat *f, uint32_t g, const double *v, int excl)
{
	double *d = f->gv + (size_t)(g - 1) * f->nm * 2 + (excl ? f->nm : 0);
	for (size_t m = 0; m < f->nm; m++)
		d[m] += isnan(v[m]) ? 0 : v[m];
}

/* Whether a procedure's row has rows below it: a loop, a statement with a line or a call
 * with a call site, with a cost, in the body of one of its frames (a <no line> statement
 * alone is left out, as report does). */
static void groups_children(struct flat *f, const uint32_t *proc_group)
{
	const struct cp_db *db = f->b->db;
	for (uint32_t i = 0; i < f->ng; i++)
		if (f->g[i].kind == G_PROC)
			f->g[i].children = 0;
	for (uint32_t i = 1; i < db->nscopes; i++) {
		const struct cp_db_scope *s = &db->scopes[i];
		int frame = f->b->frame[i] == i;
		uint32_t fr = frame ? f->b->frame[s->parent] : f->b->frame[i];
		int loc = s->file != CP_DB_NONE || s->line > 0;
		if (fr == CP_DB_NONE || db->scopes[fr].kind != CP_DBK_PROC ||
		    !any_cost(f, f->incl + (size_t)i * f->nm))
			continue;
		if ((frame && s->kind == CP_DBK_PROC && loc) ||
		    (!frame && s->kind == CP_DBK_LOOP) || (s->kind == CP_DBK_STMT && loc))
			f->g[proc_group[f->b->key[fr]] - 1].children = 1;
	}
}

/* Inclusive (outermost frames of a group) and exclusive (frame-exclusive) values. */
static void groups_sum(struct flat *f)
{
	const struct bu *b = f->b;
	const struct cp_db *db = b->db;
	uint32_t partial = 0;
	for (uint32_t i = 1; i < db->nscopes; i++) {
		if (b->frame[i] != i)
			continue;
		const double *fx = f->fexcl + (size_t)i * f->nm;
		if (db->scopes[i].kind == CP_DBK_PARTIAL) {
			if (!partial)
				partial =
				    group_new(f, 0, G_PARTIAL, CP_DB_NONE, CP_DB_NONE, CP_DB_NONE);
			add_to(f, partial, fx, 0);
			add_to(f, partial, fx, 1);
			f->partial = partial;
			continue;
		}
		for (int lv = 0; lv < 3; lv++) {
			uint32_t g = f->of[lv][i], a = b->frame[db->scopes[i].parent];
			while (a != CP_DB_NONE &&
			       (db->scopes[a].kind != CP_DBK_PROC || f->of[lv][a] != g))
				a = b->frame[db->scopes[a].parent];
			if (a == CP_DB_NONE) {
				add_to(f, g, f->incl + (size_t)i * f->nm, 0);
				f->outer[i] |= (uint8_t)(1u << lv);
			}
			add_to(f, g, fx, 1);
		}
	}
}

static int flat_insert(sqlite3 *sql, const struct flat *f, const char *path)
{
	sqlite3_stmt *sg = NULL, *sv = NULL;
	int rc = 0;
	if (sqlite3_prepare_v2(sql, "INSERT INTO flat_group VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7)", -1,
			       &sg, NULL) ||
	    sqlite3_prepare_v2(sql, "INSERT INTO flat_value VALUES(?1, ?2, ?3, ?4)", -1, &sv, NULL))
		rc = cp_db_sql_error(sql, path, "writing");
	for (size_t i = 0; i < f->ng && !rc; i++) {
		const struct group *g = &f->g[i];
		const double *v = f->gv + i * f->nm * 2;
		if (!any_cost(f, v) && !any_cost(f, v + f->nm))
			continue; /* no sample: report has no such row */
		uint32_t cols[] = {(uint32_t)i + 1, g->parent, 0, g->key, g->module, g->file};
		for (int c = 0; c < 6; c++)
			if (c == 2)
				sqlite3_bind_text(sg, 3, group_kinds[g->kind], -1, SQLITE_STATIC);
			else if (cols[c] == CP_DB_NONE)
				sqlite3_bind_null(sg, c + 1);
			else
				sqlite3_bind_int64(sg, c + 1, cols[c]);
		sqlite3_bind_int(sg, 7, g->children);
		if (sqlite3_step(sg) != SQLITE_DONE)
			rc = cp_db_sql_error(sql, path, "writing");
		sqlite3_reset(sg);
		for (size_t m = 0; m < f->nm && !rc; m++) {
			sqlite3_bind_int64(sv, 1, (int64_t)i + 1);
			sqlite3_bind_int64(sv, 2, (int64_t)m);
			sqlite3_bind_double(sv, 3, v[m]);
			sqlite3_bind_double(sv, 4, v[f->nm + m]);
			if (sqlite3_step(sv) != SQLITE_DONE)
				rc = cp_db_sql_error(sql, path, "writing");
			sqlite3_reset(sv);
		}
	}
	sqlite3_finalize(sg);
	sqlite3_finalize(sv);
	return rc;
}

/* Inclusive sums of raw metrics per scope; per frame, minus its callee frames'. */
static void values_read(struct flat *f)
{
	const struct bu *b = f->b;
	const struct cp_db *db = b->db;
	size_t nm = f->nm;
	for (uint32_t i = 1; i < db->nscopes; i++)
		for (size_t m = 0; m < nm; m++) {
			double v = cp_db_stat_get(db, i, (uint32_t)m, 1)->sum;
			f->incl[(size_t)i * nm + m] = isnan(v) ? 0 : v;
		}
	memcpy(f->fexcl, f->incl, db->nscopes * nm * sizeof(double));
	for (uint32_t i = 1; i < db->nscopes; i++) {
		uint32_t up = b->frame[i] == i ? b->frame[db->scopes[i].parent] : CP_DB_NONE;
		for (size_t m = 0; m < nm && up != CP_DB_NONE; m++)
			f->fexcl[(size_t)up * nm + m] -= f->incl[(size_t)i * nm + m];
	}
}

void cp_db_flat_map_release(struct flat_map *map)
{
	for (int lv = 0; lv < 3; lv++)
		free(map->of[lv]);
	free(map->outer);
	memset(map, 0, sizeof *map);
}

int cp_db_write_flat(sqlite3 *sql, const struct bu *b, struct flat_map *map, const char *path)
{
	const struct cp_db *db = b->db;
	struct flat f = {.b = b};
	while (f.nm < db->nmetrics && db->metrics[f.nm].kind == CP_DB_METRIC_RAW)
		f.nm++;
	size_t n = db->nscopes + 1;
	f.incl = xcalloc(n * f.nm + 1, sizeof *f.incl);
	f.fexcl = xcalloc(n * f.nm + 1, sizeof *f.fexcl);
	f.pfile = xmalloc(n * sizeof *f.pfile);
	memset(f.pfile, 0xff, n * sizeof *f.pfile);
	uint32_t *proc_group = xcalloc(n, sizeof *proc_group);
	for (int lv = 0; lv < 3; lv++)
		f.of[lv] = xcalloc(n, sizeof *f.of[lv]);
	f.outer = xcalloc(n, 1);
	cp_hashtab_init(&f.tab);
	values_read(&f);
	pfile_compute(&f);
	groups_assign(&f, proc_group);
	groups_children(&f, proc_group);
	groups_sum(&f);
	int rc = cp_db_bu_exec(sql, flat_schema, path);
	if (!rc)
		rc = flat_insert(sql, &f, path);
	if (!rc)
		rc = cp_db_bu_exec(sql, flat_index, path);
	cp_hashtab_release(&f.tab);
	*map = (struct flat_map){{f.of[0], f.of[1], f.of[2]}, f.outer, f.partial, f.ng};
	free(proc_group);
	free(f.incl);
	free(f.fexcl);
	free(f.pfile);
	free(f.g);
	free(f.gv);
	return rc;
}
