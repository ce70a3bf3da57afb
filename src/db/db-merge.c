/* cp_db_merge (db.h): a partial database appended to another, as if its producer had
 * continued in dst. Used by analyze's workers and by callpath-analyze-mpi's reduction. */
#include "db/db-impl.h"

#include "base/error.h"
#include "base/xalloc.h"

#include <stdlib.h>
#include <string.h>

struct merge_maps {
	uint32_t *mod, *file, *proc, *scope, *metric;
};

static uint32_t map_id(const uint32_t *map, uint32_t id)
{
	return id == CP_DB_NONE ? CP_DB_NONE : map[id];
}

static void merge_static(struct cp_db *dst, const struct cp_db *src, struct merge_maps *m)
{
	for (size_t i = 0; i < src->nmodules; i++) {
		const struct cp_db_module *mo = &src->modules[i];
		m->mod[i] = cp_db_module(dst, mo->path, mo->build_id, mo->build_id_len, mo->flags);
	}
	for (size_t i = 0; i < src->nfiles; i++)
		m->file[i] = cp_db_file(dst, src->files[i].path);
	for (size_t i = 0; i < src->nprocs; i++) {
		struct cp_db_proc p = src->procs[i];
		p.module = map_id(m->mod, p.module);
		p.file = map_id(m->file, p.file);
		m->proc[i] = cp_db_proc(dst, &p);
	}
}

/* Scopes in src's id order: parents first, and src's new ones are created in the order src
 * created them. */
static int merge_scopes(struct cp_db *dst, const struct cp_db *src, struct merge_maps *m)
{
	m->scope[0] = 0;
	for (size_t i = 1; i < src->nscopes; i++) {
		struct cp_db_scope s = src->scopes[i];
		s.proc = map_id(m->proc, s.proc);
		s.module = map_id(m->mod, s.module);
		s.file = map_id(m->file, s.file);
		m->scope[i] = cp_db_scope_child(dst, m->scope[s.parent], &s);
		if (m->scope[i] == CP_DB_NONE)
			return cp_error(CP_EINTERNAL, "merging databases: scope %zu has no place",
					i);
	}
	return 0;
}

static int merge_metrics(struct cp_db *dst, const struct cp_db *src, struct merge_maps *m)
{
	for (size_t i = 0; i < cp_db_nraw(src); i++) {
		m->metric[i] = cp_db_metric_add(dst, &src->metrics[i]);
		if (m->metric[i] == CP_DB_NONE)
			return cp_error(CP_EINTERNAL,
					"merging databases: metric %s cannot be added",
					src->metrics[i].name);
	}
	return 0;
}

/* The values keep src's order (ids mapped), so that cp_db_finish sorts and sums exactly
 * the sequence the producer would have appended to dst. */
static void merge_values(struct cp_db_pvalues *d, const struct cp_db_pvalues *s,
			 const struct merge_maps *m)
{
	d->n = d->alloc = s->n;
	d->v = xmalloc((s->n ? s->n : 1) * sizeof *d->v);
	d->sorted = 1;
	for (size_t i = 0; i < s->n; i++) {
		struct cp_db_value v = {m->scope[s->v[i].scope], m->metric[s->v[i].metric],
					s->v[i].value};
		if (i && (d->v[i - 1].scope > v.scope ||
			  (d->v[i - 1].scope == v.scope && d->v[i - 1].metric > v.metric)))
			d->sorted = 0;
		d->v[i] = v;
	}
}

static void merge_profiles(struct cp_db *dst, const struct cp_db *src, const struct merge_maps *m)
{
	size_t nraw = cp_db_nraw(src);
	for (size_t i = 0; i < src->nprofiles; i++) {
		struct cp_db_profile p = src->profiles[i];
		memset(p.samples, 0, sizeof p.samples);
		for (size_t k = 0; k < nraw; k++)
			p.samples[m->metric[k]] += src->profiles[i].samples[k];
		uint32_t id = cp_db_profile_add(dst, &p);
		free(dst->pvalues[id].v);
		merge_values(&dst->pvalues[id], &src->pvalues[i], m);
	}
}

int cp_db_merge(struct cp_db *dst, const struct cp_db *src)
{
	struct merge_maps m;
	m.mod = xmalloc((src->nmodules + 1) * sizeof *m.mod);
	m.file = xmalloc((src->nfiles + 1) * sizeof *m.file);
	m.proc = xmalloc((src->nprocs + 1) * sizeof *m.proc);
	m.scope = xmalloc((src->nscopes + 1) * sizeof *m.scope);
	m.metric = xmalloc((src->nmetrics + 1) * sizeof *m.metric);
	merge_static(dst, src, &m);
	int rc = merge_scopes(dst, src, &m);
	if (!rc)
		rc = merge_metrics(dst, src, &m);
	if (!rc)
		merge_profiles(dst, src, &m);
	for (size_t i = 0; !rc && i < src->run.nnotes; i++)
		cp_db_note_add(dst, src->run.notes[i]);
	for (size_t i = 0; !rc && i < src->run.nwarnings; i++)
		cp_db_warning_add(dst, src->run.warnings[i]);
	free(m.mod);
	free(m.file);
	free(m.proc);
	free(m.scope);
	free(m.metric);
	return rc;
}
