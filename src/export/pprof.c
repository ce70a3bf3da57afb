/* pprof's profile.proto, gzip-compressed (what `go tool pprof` reads). One sample per
 * scope holding cost of its own (statements, mostly), with one value per raw metric.
 * Its stack is a list of locations, innermost first: one location per procedure frame on
 * the path, whose lines are that frame's inlined frames innermost first, then the
 * out-of-line procedure (pprof's representation of inlining), each at the line where
 * the code inside it is (the statement for the innermost, the call site for the others).
 * Locations have no mapping or address: callpath resolved them already. Values are
 * rounded to integers; their sums equal the database's totals within that rounding. */
#include "export/export-impl.h"
#include "export/export.h"

#include "base/error.h"
#include "base/hash.h"
#include "base/xalloc.h"
#include "profile.pb-c.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#define MAX_LINES 8192

struct strtab {
	char **v;
	size_t n, alloc;
	struct cp_hashtab ids; /* by pointer: db strings are interned */
};

static int str_eq(const void *ctx, uint32_t idx, const void *key)
{
	return ((const struct strtab *)ctx)->v[idx] == key;
}

static int64_t str_id(struct strtab *t, const char *s)
{
	if (!s || !*s)
		return 0;
	uint64_t h = cp_hash_u64((uintptr_t)s);
	uint32_t id = cp_hashtab_find(&t->ids, h, str_eq, t, s);
	if (id != CP_HASH_NONE)
		return id;
	XGROW(t->v, t->n + 1, t->alloc);
	t->v[t->n] = (char *)s;
	cp_hashtab_insert(&t->ids, h, (uint32_t)t->n);
	return (int64_t)t->n++;
}

/* Locations, de-duplicated by their line lists. */
struct loctab {
	Perftools__Profiles__Location **v;
	size_t n, alloc;
	struct cp_hashtab ids;
};

struct lines_key {
	const Perftools__Profiles__Line *l;
	size_t n;
};

static uint64_t lines_hash(const Perftools__Profiles__Line *l, size_t n)
{
	uint64_t h = CP_FNV1A_INIT;
	for (size_t i = 0; i < n; i++)
		h = cp_hash_mix(h, l[i].function_id * 0x9e3779b97f4a7c15ull + (uint64_t)l[i].line);
	return h;
}

static int lines_eq(const void *ctx, uint32_t idx, const void *key)
{
	const Perftools__Profiles__Location *loc = ((const struct loctab *)ctx)->v[idx];
	const struct lines_key *k = key;
	if (loc->n_line != k->n)
		return 0;
	for (size_t i = 0; i < k->n; i++)
		if (loc->line[i]->function_id != k->l[i].function_id ||
		    loc->line[i]->line != k->l[i].line)
			return 0;
	return 1;
}

static uint64_t loc_id(struct loctab *t, const Perftools__Profiles__Line *l, size_t n)
{
	struct lines_key k = {l, n};
	uint64_t h = lines_hash(l, n);
	uint32_t found = cp_hashtab_find(&t->ids, h, lines_eq, t, &k);
	if (found != CP_HASH_NONE)
		return t->v[found]->id;
	XGROW(t->v, t->n + 1, t->alloc);
	Perftools__Profiles__Location *loc = xmalloc(sizeof *loc);
	perftools__profiles__location__init(loc);
	loc->id = t->n + 1;
	loc->n_line = n;
	loc->line = xmalloc((n ? n : 1) * sizeof *loc->line);
	for (size_t i = 0; i < n; i++) {
		loc->line[i] = xmalloc(sizeof *loc->line[i]);
		perftools__profiles__line__init(loc->line[i]);
		loc->line[i]->function_id = l[i].function_id;
		loc->line[i]->line = l[i].line;
	}
	cp_hashtab_insert(&t->ids, h, (uint32_t)t->n);
	t->v[t->n++] = loc;
	return loc->id;
}

static void loc_release(struct loctab *t)
{
	for (size_t i = 0; i < t->n; i++) {
		for (size_t k = 0; k < t->v[i]->n_line; k++)
			free(t->v[i]->line[k]);
		free(t->v[i]->line);
		free(t->v[i]);
	}
	free(t->v);
	cp_hashtab_release(&t->ids);
}

/* Function ids: procedure p is p + 1; then the pseudo frames. */
static uint64_t fn_partial(const struct cp_db *db)
{
	return db->nprocs + 1;
}

/* The locations of scope s's stack, innermost first, into ids; returns their number. */
static size_t stack_locations(const struct cp_db *db, struct loctab *lt, uint32_t s, uint64_t *ids,
			      size_t max, Perftools__Profiles__Line *lines)
{
	size_t nids = 0, nl = 0;
	int64_t pos = db->scopes[s].kind == CP_DBK_STMT ? db->scopes[s].line : 0;
	for (uint32_t t = s; t != CP_DB_NONE && t != 0; t = db->scopes[t].parent) {
		const struct cp_db_scope *sc = &db->scopes[t];
		if (sc->kind != CP_DBK_PROC && sc->kind != CP_DBK_INLINE &&
		    sc->kind != CP_DBK_PARTIAL)
			continue;
		if (nl < MAX_LINES) {
			lines[nl].function_id = sc->kind == CP_DBK_PARTIAL ? fn_partial(db)
						: sc->proc < db->nprocs	   ? sc->proc + 1
									   : fn_partial(db) + 1;
			lines[nl].line = pos;
			nl++;
		}
		pos = sc->line;
		if (sc->kind == CP_DBK_INLINE)
			continue;
		if (nids < max)
			ids[nids++] = loc_id(lt, lines, nl);
		nl = 0;
	}
	if (nl && nids < max) /* inlined frames with no procedure frame above (corrupt input) */
		ids[nids++] = loc_id(lt, lines, nl);
	return nids;
}

static const char *pprof_unit(const char *unit)
{
	if (!unit || !strcmp(unit, "events") || !strcmp(unit, "calls") || !*unit)
		return "count";
	if (!strcmp(unit, "ns"))
		return "nanoseconds";
	return unit; /* "bytes" */
}

struct pprof {
	struct strtab st;
	struct loctab lt;
	Perftools__Profiles__Sample **samples;
	size_t nsamples, samples_alloc;
	Perftools__Profiles__Function **fns;
	size_t nfns;
	Perftools__Profiles__ValueType **types;
	size_t ntypes;
	Perftools__Profiles__ValueType period_type;
};

static void add_functions(const struct cp_db *db, struct pprof *pp)
{
	pp->nfns = db->nprocs + 2;
	pp->fns = xmalloc(pp->nfns * sizeof *pp->fns);
	for (size_t i = 0; i < pp->nfns; i++) {
		Perftools__Profiles__Function *f = xmalloc(sizeof *f);
		perftools__profiles__function__init(f);
		f->id = i + 1;
		if (i < db->nprocs) {
			const struct cp_db_proc *p = &db->procs[i];
			f->name = str_id(&pp->st, p->name);
			f->system_name = p->linkage ? str_id(&pp->st, p->linkage) : f->name;
			f->filename = str_id(&pp->st, cp_export_file(db, p->file));
			f->start_line = p->line;
		} else {
			f->name =
			    str_id(&pp->st, i == db->nprocs ? "[partial unwind]" : "[unknown]");
			f->system_name = f->name;
		}
		pp->fns[i] = f;
	}
}

static void add_samples(const struct cp_db *db, struct pprof *pp, size_t nraw)
{
	uint64_t *ids = xmalloc(MAX_LINES * sizeof *ids);
	Perftools__Profiles__Line *lines = xmalloc(MAX_LINES * sizeof *lines);
	int64_t *vals = xmalloc(nraw * sizeof *vals);
	for (size_t s = 1; s < db->nscopes; s++) {
		int any = 0;
		for (size_t m = 0; m < nraw; m++) {
			double v = cp_export_excl(db, (uint32_t)s, (uint32_t)m);
			vals[m] = v > 0 ? (int64_t)llround(v) : 0;
			any |= vals[m] != 0;
		}
		if (!any)
			continue;
		Perftools__Profiles__Sample *sm = xmalloc(sizeof *sm);
		perftools__profiles__sample__init(sm);
		size_t n = stack_locations(db, &pp->lt, (uint32_t)s, ids, MAX_LINES, lines);
		sm->n_location_id = n;
		sm->location_id = xmalloc((n ? n : 1) * sizeof *sm->location_id);
		memcpy(sm->location_id, ids, n * sizeof *ids);
		sm->n_value = nraw;
		sm->value = xmalloc(nraw * sizeof *sm->value);
		memcpy(sm->value, vals, nraw * sizeof *vals);
		XGROW(pp->samples, pp->nsamples + 1, pp->samples_alloc);
		pp->samples[pp->nsamples++] = sm;
	}
	free(vals);
	free(lines);
	free(ids);
}

static int gzip_write(const uint8_t *buf, size_t len, FILE *out)
{
	z_stream z;
	memset(&z, 0, sizeof z);
	if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return cp_error(CP_ENOMEM, "pprof: cannot start gzip compression");
	uint8_t chunk[65536];
	z.next_in = (Bytef *)buf;
	z.avail_in = (uInt)len;
	int rc = 0, zr;
	do {
		z.next_out = chunk;
		z.avail_out = sizeof chunk;
		zr = deflate(&z, Z_FINISH);
		size_t have = sizeof chunk - z.avail_out;
		if (have && fwrite(chunk, 1, have, out) != have) {
			rc = cp_error(CP_EIO, "pprof: write failed: %s", strerror(errno));
			break;
		}
	} while (zr == Z_OK);
	if (!rc && zr != Z_STREAM_END)
		rc = cp_error(CP_EINTERNAL, "pprof: gzip compression failed (%d)", zr);
	deflateEnd(&z);
	return rc;
}

static void pprof_release(struct pprof *pp)
{
	for (size_t i = 0; i < pp->nsamples; i++) {
		free(pp->samples[i]->location_id);
		free(pp->samples[i]->value);
		free(pp->samples[i]);
	}
	free(pp->samples);
	for (size_t i = 0; i < pp->nfns; i++)
		free(pp->fns[i]);
	free(pp->fns);
	for (size_t i = 0; i < pp->ntypes; i++)
		free(pp->types[i]);
	free(pp->types);
	loc_release(&pp->lt);
	free(pp->st.v);
	cp_hashtab_release(&pp->st.ids);
}

int cp_export_pprof(const struct cp_db *db, const struct cp_export_options *o, FILE *out)
{
	uint32_t dflt;
	int rc = cp_export_start(db, o, &dflt);
	if (rc)
		return rc;
	size_t nraw = cp_db_nraw(db);
	struct pprof pp;
	memset(&pp, 0, sizeof pp);
	XGROW(pp.st.v, 1, pp.st.alloc);
	pp.st.v[pp.st.n++] = ""; /* string_table[0] must be "" */
	pp.ntypes = nraw;
	pp.types = xmalloc(nraw * sizeof *pp.types);
	for (size_t m = 0; m < nraw; m++) {
		pp.types[m] = xmalloc(sizeof *pp.types[m]);
		perftools__profiles__value_type__init(pp.types[m]);
		pp.types[m]->type = str_id(&pp.st, db->metrics[m].name);
		pp.types[m]->unit = str_id(&pp.st, pprof_unit(db->metrics[m].unit));
	}
	add_functions(db, &pp);
	add_samples(db, &pp, nraw);

	Perftools__Profiles__Profile prof;
	perftools__profiles__profile__init(&prof);
	prof.n_sample_type = pp.ntypes;
	prof.sample_type = pp.types;
	prof.n_sample = pp.nsamples;
	prof.sample = pp.samples;
	prof.n_location = pp.lt.n;
	prof.location = pp.lt.v;
	prof.n_function = pp.nfns;
	prof.function = pp.fns;
	perftools__profiles__value_type__init(&pp.period_type);
	pp.period_type = *pp.types[dflt];
	prof.period_type = &pp.period_type;
	prof.period = (int64_t)db->metrics[dflt].period;
	prof.time_nanos = (int64_t)db->run.start_ns;
	prof.duration_nanos = (int64_t)llround(db->run.duration_s * 1e9);
	prof.default_sample_type = pp.types[dflt]->type;
	prof.n_string_table = pp.st.n;
	prof.string_table = pp.st.v;

	size_t len = perftools__profiles__profile__get_packed_size(&prof);
	uint8_t *buf = xmalloc(len ? len : 1);
	perftools__profiles__profile__pack(&prof, buf);
	rc = gzip_write(buf, len, out);
	free(buf);
	pprof_release(&pp);
	return rc;
}
