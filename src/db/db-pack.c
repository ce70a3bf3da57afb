/* cp_db_pack / cp_db_unpack (db.h): a partial database as bytes, for sending between the
 * ranks of callpath-analyze-mpi. Native byte order and sizes (the ranks of one job run the
 * same build); every read is bounds-checked all the same. */
#include "db/db-impl.h"

#include "base/error.h"
#include "base/strbuf.h"
#include "base/xalloc.h"

#include <stdlib.h>
#include <string.h>

#define PACK_MAGIC "CPDBPK01"
#define NO_STRING UINT32_MAX

static void put(struct strbuf *sb, const void *p, size_t n)
{
	strbuf_add(sb, p, n);
}

static void put_u32(struct strbuf *sb, uint32_t v)
{
	put(sb, &v, sizeof v);
}

static void put_u64(struct strbuf *sb, uint64_t v)
{
	put(sb, &v, sizeof v);
}

static void put_str(struct strbuf *sb, const char *s)
{
	if (!s) {
		put_u32(sb, NO_STRING);
		return;
	}
	uint32_t n = (uint32_t)strlen(s);
	put_u32(sb, n);
	put(sb, s, n);
}

static void pack_static(const struct cp_db *db, struct strbuf *sb)
{
	put_u64(sb, db->nmodules);
	for (size_t i = 0; i < db->nmodules; i++) {
		const struct cp_db_module *m = &db->modules[i];
		put_str(sb, m->path);
		put_u32(sb, m->build_id_len);
		put(sb, m->build_id, sizeof m->build_id);
		put_u32(sb, m->flags);
	}
	put_u64(sb, db->nfiles);
	for (size_t i = 0; i < db->nfiles; i++)
		put_str(sb, db->files[i].path);
	put_u64(sb, db->nprocs);
	for (size_t i = 0; i < db->nprocs; i++) {
		struct cp_db_proc p = db->procs[i];
		put_str(sb, p.name);
		put_str(sb, p.linkage);
		p.name = p.linkage = NULL;
		put(sb, &p, sizeof p);
	}
	put_u64(sb, db->nscopes);
	for (size_t i = 1; i < db->nscopes; i++)
		put(sb, &db->scopes[i], sizeof db->scopes[i]);
}

static void pack_metrics_profiles(const struct cp_db *db, struct strbuf *sb)
{
	size_t nraw = cp_db_nraw(db);
	put_u64(sb, nraw);
	for (size_t i = 0; i < nraw; i++) {
		struct cp_db_metric m = db->metrics[i];
		put_str(sb, m.name);
		put_str(sb, m.unit);
		put_str(sb, m.description);
		m.name = m.unit = m.description = m.formula = NULL;
		put(sb, &m, sizeof m);
	}
	put_u64(sb, db->nprofiles);
	for (size_t i = 0; i < db->nprofiles; i++) {
		struct cp_db_profile p = db->profiles[i];
		put_str(sb, p.host);
		put_str(sb, p.thread_name);
		put_str(sb, p.command);
		p.host = p.thread_name = p.command = NULL;
		put(sb, &p, sizeof p);
		const struct cp_db_pvalues *pv = &db->pvalues[i];
		put_u64(sb, pv->n);
		put(sb, pv->v, pv->n * sizeof *pv->v);
	}
	put_u64(sb, db->run.nnotes);
	for (size_t i = 0; i < db->run.nnotes; i++)
		put_str(sb, db->run.notes[i]);
	put_u64(sb, db->run.nwarnings);
	for (size_t i = 0; i < db->run.nwarnings; i++)
		put_str(sb, db->run.warnings[i]);
}

void cp_db_pack(const struct cp_db *db, struct strbuf *sb)
{
	put(sb, PACK_MAGIC, 8);
	pack_static(db, sb);
	pack_metrics_profiles(db, sb);
}

struct reader {
	const unsigned char *p, *end;
	int bad;
	char *strs[3]; /* the last strings read (get_str), freed by the next reads */
	int next;
};

static int get(struct reader *r, void *out, size_t n)
{
	if (r->bad || (size_t)(r->end - r->p) < n) {
		r->bad = 1;
		memset(out, 0, n);
		return -1;
	}
	memcpy(out, r->p, n);
	r->p += n;
	return 0;
}

static uint64_t get_u64(struct reader *r)
{
	uint64_t v;
	get(r, &v, sizeof v);
	return v;
}

/* A count of items of at least `size` bytes each: no more than the bytes left allow. */
static size_t get_count(struct reader *r, size_t size)
{
	uint64_t n = get_u64(r);
	if (n > (uint64_t)(r->end - r->p) / (size ? size : 1)) {
		r->bad = 1;
		return 0;
	}
	return (size_t)n;
}

static const char *get_str(struct reader *r)
{
	uint32_t n;
	if (get(r, &n, sizeof n) || n == NO_STRING)
		return NULL;
	if ((size_t)(r->end - r->p) < n) {
		r->bad = 1;
		return NULL;
	}
	char **slot = &r->strs[r->next];
	r->next = (r->next + 1) % 3;
	free(*slot);
	*slot = xstrndup((const char *)r->p, n);
	r->p += n;
	return *slot;
}

static void unpack_static(struct reader *r, struct cp_db *db)
{
	for (size_t i = 0, n = get_count(r, 4); i < n && !r->bad; i++) {
		const char *path = get_str(r);
		uint32_t len, flags;
		uint8_t bid[32];
		get(r, &len, sizeof len);
		get(r, bid, sizeof bid);
		get(r, &flags, sizeof flags);
		if (!r->bad)
			cp_db_module(db, path, bid, len > 32 ? 32 : len, flags);
	}
	for (size_t i = 0, n = get_count(r, 4); i < n && !r->bad; i++) {
		const char *path = get_str(r);
		if (!r->bad)
			cp_db_file(db, path ? path : "");
	}
	for (size_t i = 0, n = get_count(r, 8); i < n && !r->bad; i++) {
		const char *name = get_str(r), *linkage = get_str(r);
		struct cp_db_proc p;
		get(r, &p, sizeof p);
		p.name = name;
		p.linkage = linkage;
		if (!r->bad &&
		    (p.module >= db->nmodules || (p.file != CP_DB_NONE && p.file >= db->nfiles)))
			r->bad = 1;
		if (!r->bad && cp_db_proc(db, &p) != i)
			r->bad = 1;
	}
	size_t ns = get_count(r, 0);
	for (size_t i = 1; i < ns && !r->bad; i++) {
		struct cp_db_scope s;
		get(r, &s, sizeof s);
		if (!r->bad && (s.parent >= i || cp_db_scope_child(db, s.parent, &s) != i))
			r->bad = 1;
	}
}

static void unpack_values(struct reader *r, struct cp_db *db, uint32_t id, size_t nraw)
{
	size_t n = get_count(r, sizeof(struct cp_db_value));
	struct cp_db_pvalues *pv = &db->pvalues[id];
	free(pv->v);
	pv->v = xmalloc((n ? n : 1) * sizeof *pv->v);
	pv->n = pv->alloc = n;
	pv->sorted = 1;
	get(r, pv->v, n * sizeof *pv->v);
	for (size_t k = 0; k < n && !r->bad; k++) {
		const struct cp_db_value *v = &pv->v[k];
		if (v->scope >= db->nscopes || v->metric >= nraw)
			r->bad = 1;
		else if (k && (v[-1].scope > v->scope ||
			       (v[-1].scope == v->scope && v[-1].metric > v->metric)))
			pv->sorted = 0;
	}
}

static void unpack_metrics_profiles(struct reader *r, struct cp_db *db)
{
	size_t nraw = get_count(r, 8);
	for (size_t i = 0; i < nraw && !r->bad; i++) {
		const char *name = get_str(r), *unit = get_str(r), *desc = get_str(r);
		struct cp_db_metric m;
		get(r, &m, sizeof m);
		m.name = name;
		m.unit = unit;
		m.description = desc;
		if (!r->bad && cp_db_metric_add(db, &m) != i)
			r->bad = 1;
	}
	for (size_t i = 0, n = get_count(r, 8); i < n && !r->bad; i++) {
		const char *host = get_str(r), *tname = get_str(r), *cmd = get_str(r);
		struct cp_db_profile p;
		get(r, &p, sizeof p);
		p.host = host;
		p.thread_name = tname;
		p.command = cmd;
		if (r->bad)
			break;
		unpack_values(r, db, cp_db_profile_add(db, &p), nraw);
	}
	for (size_t i = 0, n = get_count(r, 4); i < n && !r->bad; i++) {
		const char *s = get_str(r);
		if (s)
			cp_db_note_add(db, s);
	}
	for (size_t i = 0, n = get_count(r, 4); i < n && !r->bad; i++) {
		const char *s = get_str(r);
		if (s)
			cp_db_warning_add(db, s);
	}
}

int cp_db_unpack(struct cp_db *db, const void *buf, size_t size)
{
	struct reader r = {buf, (const unsigned char *)buf + size, 0, {NULL, NULL, NULL}, 0};
	char magic[8];
	cp_db_init(db);
	if (get(&r, magic, 8) || memcmp(magic, PACK_MAGIC, 8))
		r.bad = 1;
	unpack_static(&r, db);
	unpack_metrics_profiles(&r, db);
	if (!r.bad && r.p != r.end)
		r.bad = 1;
	for (int i = 0; i < 3; i++)
		free(r.strs[i]);
	if (!r.bad)
		return 0;
	cp_db_release(db);
	return cp_error(CP_EFORMAT, "a packed partial database is truncated or corrupt");
}
