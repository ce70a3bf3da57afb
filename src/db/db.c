/* The in-memory profile database (db.h): interning of strings, modules, files, procedures
 * and scopes through hash tables, per-profile sparse values, and cp_db_finish(), which
 * merges values and computes inclusive values and summary statistics.
 *
 * Scope ids are allocated in creation order and a scope is only created under an existing
 * parent, so every child has a larger id than its parent: one pass over the scopes in
 * decreasing id order visits children before parents (inclusive sums rely on this). */
#include "db/db-impl.h"

#include "base/hash.h"
#include "base/xalloc.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- hashing --------------------------------------------------------------------------------- */

static uint64_t hstr(uint64_t h, const char *s)
{
	return cp_hash_mix(h, s ? cp_hash_str(s) : CP_FNV1A_INIT);
}

static uint64_t hbytes(uint64_t h, const uint8_t *p, size_t n)
{
	return cp_hash_mix(h, cp_fnv1a(CP_FNV1A_INIT, p, n));
}

/* ---- the string pool ------------------------------------------------------------------------ */

struct pool_chunk {
	struct pool_chunk *next;
	size_t used, cap;
	char data[];
};

struct cp_db_strpool {
	struct pool_chunk *head;
};

static char *pool_alloc(struct cp_db_strpool *p, size_t n)
{
	struct pool_chunk *c = p->head;
	if (!c || c->cap - c->used < n) {
		size_t cap = n > 65536 ? n : 65536;
		c = xmalloc(sizeof *c + cap);
		c->used = 0;
		c->cap = cap;
		if (n > 65536 && p->head) { /* a big one: keep filling the current chunk */
			c->next = p->head->next;
			p->head->next = c;
		} else {
			c->next = p->head;
			p->head = c;
		}
	}
	char *r = c->data + c->used;
	c->used += n;
	return r;
}

static int str_eq(const void *ctx, uint32_t id, const void *key)
{
	const struct cp_db *db = ctx;
	return !strcmp(cp_db_impl(db)->strs[id], key);
}

const char *cp_db_intern(struct cp_db *db, const char *s)
{
	if (!s)
		return NULL;
	struct cp_db_impl *im = cp_db_impl(db);
	uint64_t h = hstr(0, s);
	uint32_t id = cp_hashtab_find(&im->strtab, h, str_eq, db, s);
	if (id != CP_DB_NONE)
		return im->strs[id];
	size_t len = strlen(s) + 1;
	char *copy = pool_alloc(db->strings, len);
	memcpy(copy, s, len);
	XGROW(im->strs, im->nstrs + 1, im->astrs);
	im->strs[im->nstrs] = copy;
	cp_hashtab_insert(&im->strtab, h, (uint32_t)im->nstrs);
	im->nstrs++;
	return copy;
}

/* ---- init / release ------------------------------------------------------------------------- */

void cp_db_init(struct cp_db *db)
{
	memset(db, 0, sizeof *db);
	db->strings = xcalloc(1, sizeof *db->strings);
	struct cp_db_impl *im = xcalloc(1, sizeof *im);
	db->impl = im;
	im->ascopes = 64;
	db->scopes = xcalloc(im->ascopes, sizeof *db->scopes);
	im->last_child = xmalloc(im->ascopes * sizeof *im->last_child);
	struct cp_db_scope *root = &db->scopes[0];
	root->parent = root->first_child = root->next_sibling = CP_DB_NONE;
	root->kind = CP_DBK_ROOT;
	root->proc = root->module = root->file = CP_DB_NONE;
	im->last_child[0] = CP_DB_NONE;
	db->nscopes = 1;
}

void cp_db_release(struct cp_db *db)
{
	struct cp_db_impl *im = cp_db_impl(db);
	if (db->strings) {
		for (struct pool_chunk *c = db->strings->head, *n; c; c = n) {
			n = c->next;
			free(c);
		}
		free(db->strings);
	}
	if (im) {
		cp_hashtab_release(&im->strtab);
		cp_hashtab_release(&im->modtab);
		cp_hashtab_release(&im->filetab);
		cp_hashtab_release(&im->proctab);
		cp_hashtab_release(&im->scopetab);
		free(im->strs);
		free(im->last_child);
		for (size_t i = 0; im->exprs && i < db->nmetrics; i++)
			cp_expr_free(im->exprs[i]);
		free(im->exprs);
		free(im);
	}
	free((void *)db->run.notes);
	free((void *)db->run.warnings);
	free(db->run.sources);
	free(db->modules);
	free(db->files);
	free(db->procs);
	free(db->scopes);
	free(db->metrics);
	free(db->profiles);
	for (size_t i = 0; db->pvalues && i < db->nprofiles; i++)
		free(db->pvalues[i].v);
	free(db->pvalues);
	free(db->stats);
	memset(db, 0, sizeof *db);
}

static void unfinish(struct cp_db *db)
{
	db->finished = 0;
}

/* ---- run metadata ---------------------------------------------------------------------------- */

void cp_db_note_add(struct cp_db *db, const char *note)
{
	struct cp_db_impl *im = cp_db_impl(db);
	const char *s = cp_db_intern(db, note);
	for (size_t i = 0; i < db->run.nnotes; i++)
		if (db->run.notes[i] == s)
			return;
	XGROW(db->run.notes, db->run.nnotes + 1, im->anotes);
	db->run.notes[db->run.nnotes++] = s;
}

void cp_db_warning_add(struct cp_db *db, const char *warning)
{
	struct cp_db_impl *im = cp_db_impl(db);
	const char *s = cp_db_intern(db, warning);
	for (size_t i = 0; i < db->run.nwarnings; i++)
		if (db->run.warnings[i] == s)
			return;
	XGROW(db->run.warnings, db->run.nwarnings + 1, im->awarnings);
	db->run.warnings[db->run.nwarnings++] = s;
}

void cp_db_source_add(struct cp_db *db, const struct cp_db_source *s)
{
	struct cp_db_impl *im = cp_db_impl(db);
	XGROW(db->run.sources, db->run.nsources + 1, im->asources);
	struct cp_db_source *d = &db->run.sources[db->run.nsources++];
	*d = *s;
	d->name = cp_db_intern(db, s->name);
}

/* ---- modules, files, procedures -------------------------------------------------------------- */

struct mod_key {
	const char *path;
	const uint8_t *bid;
	size_t len;
};

static int mod_eq(const void *ctx, uint32_t id, const void *key)
{
	const struct cp_db *db = ctx;
	const struct mod_key *k = key;
	const struct cp_db_module *m = &db->modules[id];
	return !strcmp(m->path, k->path) && m->build_id_len == k->len &&
	       !memcmp(m->build_id, k->bid, k->len);
}

uint32_t cp_db_module(struct cp_db *db, const char *path, const uint8_t *build_id,
		      size_t build_id_len, uint32_t flags)
{
	struct cp_db_impl *im = cp_db_impl(db);
	if (!path)
		path = "";
	if (build_id_len > sizeof db->modules[0].build_id)
		build_id_len = sizeof db->modules[0].build_id;
	if (!build_id)
		build_id_len = 0;
	struct mod_key k = {path, build_id, build_id_len};
	uint64_t h = hbytes(hstr(1, path), build_id, build_id_len);
	uint32_t id = cp_hashtab_find(&im->modtab, h, mod_eq, db, &k);
	if (id != CP_DB_NONE) {
		db->modules[id].flags |= flags;
		return id;
	}
	XGROW(db->modules, db->nmodules + 1, im->amodules);
	id = (uint32_t)db->nmodules++;
	struct cp_db_module *m = &db->modules[id];
	memset(m, 0, sizeof *m);
	m->path = cp_db_intern(db, path);
	const char *slash = strrchr(path, '/');
	m->name = slash && slash[1] ? cp_db_intern(db, slash + 1) : m->path;
	if (build_id_len)
		memcpy(m->build_id, build_id, build_id_len);
	m->build_id_len = (uint32_t)build_id_len;
	m->flags = flags;
	cp_hashtab_insert(&im->modtab, h, id);
	return id;
}

static int file_eq(const void *ctx, uint32_t id, const void *key)
{
	const struct cp_db *db = ctx;
	return !strcmp(db->files[id].path, key);
}

uint32_t cp_db_file(struct cp_db *db, const char *path)
{
	struct cp_db_impl *im = cp_db_impl(db);
	if (!path)
		return CP_DB_NONE;
	uint64_t h = hstr(2, path);
	uint32_t id = cp_hashtab_find(&im->filetab, h, file_eq, db, path);
	if (id != CP_DB_NONE)
		return id;
	XGROW(db->files, db->nfiles + 1, im->afiles);
	id = (uint32_t)db->nfiles++;
	db->files[id].path = cp_db_intern(db, path);
	cp_hashtab_insert(&im->filetab, h, id);
	return id;
}

static int proc_eq(const void *ctx, uint32_t id, const void *key)
{
	const struct cp_db *db = ctx;
	const struct cp_db_proc *k = key, *p = &db->procs[id];
	return p->module == k->module && p->entry == k->entry && !strcmp(p->name, k->name);
}

uint32_t cp_db_proc(struct cp_db *db, const struct cp_db_proc *p)
{
	struct cp_db_impl *im = cp_db_impl(db);
	struct cp_db_proc k = *p;
	if (!k.name)
		k.name = "";
	uint64_t h = hstr(cp_hash_mix(cp_hash_mix(3, k.module), k.entry), k.name);
	uint32_t id = cp_hashtab_find(&im->proctab, h, proc_eq, db, &k);
	if (id != CP_DB_NONE)
		return id;
	XGROW(db->procs, db->nprocs + 1, im->aprocs);
	id = (uint32_t)db->nprocs++;
	k.name = cp_db_intern(db, k.name);
	k.linkage = cp_db_intern(db, k.linkage);
	db->procs[id] = k;
	cp_hashtab_insert(&im->proctab, h, id);
	return id;
}

/* ---- scopes ------------------------------------------------------------------------------------
 */

/* The identity of a scope under its parent (see cp_db_scope_child in db.h). */
static uint64_t scope_hash(uint32_t parent, const struct cp_db_scope *s)
{
	uint64_t h = cp_hash_mix(cp_hash_mix(4, parent), s->kind);
	switch (s->kind) {
	case CP_DBK_PROC:
	case CP_DBK_INLINE:
		return cp_hash_mix(cp_hash_mix(cp_hash_mix(h, s->proc), s->file), s->line);
	case CP_DBK_LOOP:
		return cp_hash_mix(cp_hash_mix(h, s->module), s->addr);
	case CP_DBK_STMT:
		return cp_hash_mix(cp_hash_mix(h, s->file), s->line);
	default:
		return h;
	}
}

struct scope_key {
	uint32_t parent;
	const struct cp_db_scope *s;
};

static int scope_eq(const void *ctx, uint32_t id, const void *key)
{
	const struct cp_db *db = ctx;
	const struct scope_key *k = key;
	const struct cp_db_scope *a = &db->scopes[id], *b = k->s;
	if (a->parent != k->parent || a->kind != b->kind)
		return 0;
	switch (b->kind) {
	case CP_DBK_PROC:
	case CP_DBK_INLINE:
		return a->proc == b->proc && a->file == b->file && a->line == b->line;
	case CP_DBK_LOOP:
		return a->module == b->module && a->addr == b->addr;
	case CP_DBK_STMT:
		return a->file == b->file && a->line == b->line;
	default:
		return 1;
	}
}

uint32_t cp_db_scope_child(struct cp_db *db, uint32_t parent, const struct cp_db_scope *s)
{
	struct cp_db_impl *im = cp_db_impl(db);
	if (parent >= db->nscopes || s->kind == CP_DBK_ROOT || s->kind > CP_DBK_PARTIAL)
		return CP_DB_NONE;
	struct scope_key k = {parent, s};
	uint64_t h = scope_hash(parent, s);
	uint32_t id = cp_hashtab_find(&im->scopetab, h, scope_eq, db, &k);
	if (id != CP_DB_NONE)
		return id;
	if (db->nscopes >= CP_DB_NONE - 1)
		return CP_DB_NONE;
	size_t old = im->ascopes;
	XGROW(db->scopes, db->nscopes + 1, im->ascopes);
	if (im->ascopes != old)
		im->last_child = xrealloc(im->last_child, im->ascopes * sizeof *im->last_child);
	id = (uint32_t)db->nscopes++;
	struct cp_db_scope *n = &db->scopes[id];
	*n = *s;
	memset(n->pad, 0, sizeof n->pad);
	n->parent = parent;
	n->first_child = n->next_sibling = CP_DB_NONE;
	n->depth = db->scopes[parent].depth + 1;
	if (db->scopes[parent].first_child == CP_DB_NONE)
		db->scopes[parent].first_child = id;
	else
		db->scopes[im->last_child[parent]].next_sibling = id;
	im->last_child[parent] = id;
	im->last_child[id] = CP_DB_NONE;
	cp_hashtab_insert(&im->scopetab, h, id);
	unfinish(db);
	return id;
}

/* ---- metrics and profiles ----------------------------------------------------------------------
 */

static uint32_t metric_append(struct cp_db *db, const struct cp_db_metric *m)
{
	struct cp_db_impl *im = cp_db_impl(db);
	XGROW(db->metrics, db->nmetrics + 1, im->ametrics);
	im->exprs = xrealloc(im->exprs, im->ametrics * sizeof *im->exprs);
	uint32_t id = (uint32_t)db->nmetrics++;
	struct cp_db_metric *n = &db->metrics[id];
	*n = *m;
	n->name = cp_db_intern(db, m->name ? m->name : "");
	n->unit = cp_db_intern(db, m->unit ? m->unit : "");
	n->description = cp_db_intern(db, m->description);
	n->formula = cp_db_intern(db, m->formula);
	im->exprs[id] = NULL;
	return id;
}

uint32_t cp_db_metric_add(struct cp_db *db, const struct cp_db_metric *m)
{
	struct cp_db_impl *im = cp_db_impl(db);
	uint32_t id = m->name ? cp_db_metric_find(db, m->name) : CP_DB_NONE;
	if (id != CP_DB_NONE)
		return id < im->nraw ? id : CP_DB_NONE;
	if (db->nmetrics != im->nraw || im->nraw >= CP_DB_MAX_METRICS)
		return CP_DB_NONE;
	id = metric_append(db, m);
	db->metrics[id].kind = CP_DB_METRIC_RAW;
	db->metrics[id].formula = NULL;
	im->nraw++;
	unfinish(db);
	return id;
}

/* Stats are laid out by nmetrics: a metric added to a finished database moves them. */
static void stats_relayout(struct cp_db *db, size_t old_nm)
{
	size_t nm = db->nmetrics;
	struct cp_db_stat *n = xcalloc(db->nscopes * nm * 2, sizeof *n);
	for (size_t s = 0; s < db->nscopes; s++)
		memcpy(&n[s * nm * 2], &db->stats[s * old_nm * 2], old_nm * 2 * sizeof *n);
	free(db->stats);
	db->stats = n;
}

uint32_t cp_db_metric_add_derived(struct cp_db *db, const struct cp_db_metric *m,
				  struct cp_expr *expr)
{
	size_t old_nm = db->nmetrics;
	uint32_t id = metric_append(db, m);
	db->metrics[id].kind = CP_DB_METRIC_DERIVED;
	cp_db_impl(db)->exprs[id] = expr;
	if (db->finished && db->stats) {
		stats_relayout(db, old_nm);
		cp_db_derived_compute(db, id);
	}
	return id;
}

uint32_t cp_db_metric_find(const struct cp_db *db, const char *name)
{
	for (size_t i = 0; i < db->nmetrics; i++)
		if (!strcmp(db->metrics[i].name, name))
			return (uint32_t)i;
	return CP_DB_NONE;
}

size_t cp_db_nraw(const struct cp_db *db)
{
	return cp_db_impl(db)->nraw;
}

int cp_db_metric_loop_own(const struct cp_db *db, uint32_t m)
{
	const char *n = m < db->nmetrics ? db->metrics[m].name : NULL;
	return m < cp_db_nraw(db) && n && !strncmp(n, "loop-", 5);
}

uint32_t cp_db_profile_add(struct cp_db *db, const struct cp_db_profile *p)
{
	struct cp_db_impl *im = cp_db_impl(db);
	size_t old = im->aprofiles;
	XGROW(db->profiles, db->nprofiles + 1, im->aprofiles);
	if (old != im->aprofiles) {
		db->pvalues = xrealloc(db->pvalues, im->aprofiles * sizeof *db->pvalues);
		memset(db->pvalues + old, 0, (im->aprofiles - old) * sizeof *db->pvalues);
	}
	uint32_t id = (uint32_t)db->nprofiles++;
	struct cp_db_profile *n = &db->profiles[id];
	*n = *p;
	n->host = cp_db_intern(db, p->host);
	n->thread_name = cp_db_intern(db, p->thread_name);
	n->command = cp_db_intern(db, p->command);
	db->pvalues[id].sorted = 1;
	unfinish(db);
	return id;
}

void cp_db_add(struct cp_db *db, uint32_t profile, uint32_t scope, uint32_t metric, double value)
{
	if (profile >= db->nprofiles || scope >= db->nscopes || metric >= cp_db_impl(db)->nraw ||
	    value == 0)
		return;
	struct cp_db_pvalues *pv = &db->pvalues[profile];
	if (pv->n) {
		struct cp_db_value *last = &pv->v[pv->n - 1];
		if (last->scope == scope && last->metric == metric) {
			last->value += value;
			unfinish(db);
			return;
		}
		if (last->scope > scope || (last->scope == scope && last->metric > metric))
			pv->sorted = 0;
	}
	XGROW(pv->v, pv->n + 1, pv->alloc);
	pv->v[pv->n++] = (struct cp_db_value){scope, metric, value};
	unfinish(db);
}

void cp_db_profile_dense(const struct cp_db *db, uint32_t profile, double *excl, double *incl)
{
	size_t nraw = cp_db_nraw(db), ns = db->nscopes;
	memset(excl, 0, ns * nraw * sizeof *excl);
	if (incl)
		memset(incl, 0, ns * nraw * sizeof *incl);
	if (profile >= db->nprofiles)
		return;
	const struct cp_db_pvalues *pv = &db->pvalues[profile];
	for (size_t i = 0; i < pv->n; i++)
		excl[(size_t)pv->v[i].scope * nraw + pv->v[i].metric] += pv->v[i].value;
	if (!incl)
		return;
	memcpy(incl, excl, ns * nraw * sizeof *incl);
	for (size_t s = ns; s-- > 1;) {
		uint32_t par = db->scopes[s].parent;
		for (size_t m = 0; m < nraw; m++)
			incl[(size_t)par * nraw + m] += incl[s * nraw + m];
	}
}

void cp_db_self_sums(const struct cp_db *db, double *self)
{
	size_t nm = db->nmetrics, ns = db->nscopes;
	memset(self, 0, ns * nm * sizeof *self);
	if (!db->stats)
		return;
	for (size_t s = 0; s < ns; s++)
		for (size_t m = 0; m < nm; m++)
			self[s * nm + m] = db->stats[(s * nm + m) * 2].sum;
}
