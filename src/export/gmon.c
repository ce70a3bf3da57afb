/* gmon.out writer (gmon.h), the export of a profile database's executable to it, and its
 * collection from a probed measurement directory (callpath gprof). */
#include "export/gmon.h"
#include "export/export-impl.h"
#include "export/export.h"

#include "base/error.h"
#include "base/xalloc.h"
#include "format/measure-read.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define GMON_MAX_BINS (1u << 22)

void cp_gmon_init(struct cp_gmon *g, uint64_t low_pc, uint64_t high_pc, uint32_t bin_bytes)
{
	memset(g, 0, sizeof(*g));
	if (high_pc <= low_pc)
		high_pc = low_pc + 1;
	if (!bin_bytes)
		bin_bytes = 1;
	uint64_t span = high_pc - low_pc;
	uint64_t nbins = (span + bin_bytes - 1) / bin_bytes;
	if (nbins > GMON_MAX_BINS) {
		nbins = GMON_MAX_BINS;
		bin_bytes = (uint32_t)((span + nbins - 1) / nbins);
	}
	/* gprof maps bin i to [low + i*span/n, ...): keep span a multiple of the bin width. */
	g->low_pc = low_pc;
	g->high_pc = low_pc + nbins * bin_bytes;
	g->nbins = (uint32_t)nbins;
	g->seconds = xcalloc(nbins, sizeof(*g->seconds));
}

void cp_gmon_release(struct cp_gmon *g)
{
	free(g->seconds);
	free(g->arcs);
	memset(g, 0, sizeof(*g));
}

int cp_gmon_hist_add(struct cp_gmon *g, uint64_t pc, double seconds)
{
	if (pc < g->low_pc || pc >= g->high_pc)
		return -1;
	uint64_t width = (g->high_pc - g->low_pc) / g->nbins;
	g->seconds[(pc - g->low_pc) / width] += seconds;
	return 0;
}

void cp_gmon_arc_add(struct cp_gmon *g, uint64_t from_pc, uint64_t self_pc, uint64_t count)
{
	for (size_t i = 0; i < g->narcs; i++)
		if (g->arcs[i].from_pc == from_pc && g->arcs[i].self_pc == self_pc) {
			g->arcs[i].count += count;
			return;
		}
	if (g->narcs == g->arcs_alloc) {
		g->arcs_alloc = g->arcs_alloc ? 2 * g->arcs_alloc : 16;
		g->arcs = xrealloc(g->arcs, g->arcs_alloc * sizeof(*g->arcs));
	}
	g->arcs[g->narcs++] = (struct cp_gmon_arc){from_pc, self_pc, count};
}

uint32_t cp_gmon_rate(const struct cp_gmon *g, uint32_t max_rate)
{
	double max = 0;
	for (uint32_t i = 0; i < g->nbins; i++)
		if (g->seconds[i] > max)
			max = g->seconds[i];
	double rate = max_rate ? max_rate : 1000000;
	if (max > 0 && max * rate > 65535.4)
		rate = floor(65535.4 / max);
	return rate < 1 ? 1 : (uint32_t)rate;
}

static void put_le(unsigned char *p, uint64_t v, int n)
{
	for (int i = 0; i < n; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static int arc_cmp(const void *a, const void *b)
{
	const struct cp_gmon_arc *x = a, *y = b;
	if (x->from_pc != y->from_pc)
		return x->from_pc < y->from_pc ? -1 : 1;
	return x->self_pc < y->self_pc ? -1 : x->self_pc > y->self_pc;
}

int cp_gmon_write(const struct cp_gmon *g, uint32_t max_rate, FILE *out)
{
	unsigned char hdr[20] = {'g', 'm', 'o', 'n'};
	put_le(hdr + 4, 1, 4);
	fwrite(hdr, 1, sizeof hdr, out);
	uint32_t rate = cp_gmon_rate(g, max_rate);
	unsigned char h[1 + 8 + 8 + 4 + 4 + 15 + 1] = {0};
	h[0] = 0; /* GMON_TAG_TIME_HIST */
	put_le(h + 1, g->low_pc, 8);
	put_le(h + 9, g->high_pc, 8);
	put_le(h + 17, g->nbins, 4);
	put_le(h + 21, rate, 4);
	memcpy(h + 25, "seconds", 7);
	h[40] = 's';
	fwrite(h, 1, sizeof h, out);
	for (uint32_t i = 0; i < g->nbins; i++) {
		double t = round(g->seconds[i] * rate);
		unsigned char b[2];
		put_le(b, t > 65535 ? 65535 : (uint64_t)t, 2);
		fwrite(b, 1, 2, out);
	}
	struct cp_gmon_arc *arcs = xmalloc((g->narcs ? g->narcs : 1) * sizeof(*arcs));
	memcpy(arcs, g->arcs, g->narcs * sizeof(*arcs));
	qsort(arcs, g->narcs, sizeof(*arcs), arc_cmp);
	for (size_t i = 0; i < g->narcs; i++) {
		unsigned char a[1 + 8 + 8 + 4];
		a[0] = 1; /* GMON_TAG_CG_ARC */
		put_le(a + 1, arcs[i].from_pc, 8);
		put_le(a + 9, arcs[i].self_pc, 8);
		put_le(a + 17, arcs[i].count > UINT32_MAX ? UINT32_MAX : arcs[i].count, 4);
		fwrite(a, 1, sizeof a, out);
	}
	free(arcs);
	if (ferror(out))
		return cp_error(CP_EIO, "writing gmon.out: %s", strerror(errno));
	return 0;
}

/* ---- from a profile database ---- */

static uint32_t pick_module(const struct cp_db *db, uint32_t metric)
{
	double *sum = xcalloc(db->nmodules ? db->nmodules : 1, sizeof(*sum));
	for (size_t s = 0; s < db->nscopes; s++) {
		uint32_t m = db->scopes[s].module;
		if (m < db->nmodules)
			sum[m] += cp_export_excl(db, (uint32_t)s, metric);
	}
	uint32_t best = CP_DB_NONE;
	for (size_t m = 0; m < db->nmodules; m++)
		if ((db->modules[m].flags & CP_DB_MOD_EXE) &&
		    (best == CP_DB_NONE || sum[m] > sum[best]))
			best = (uint32_t)m;
	free(sum);
	return best;
}

/* The address a scope's cost is at: its own (statements, loops, frames), else the
 * nearest ancestor's with one. */
static uint64_t scope_pc(const struct cp_db *db, uint32_t s, uint32_t module)
{
	for (; s != CP_DB_NONE && s < db->nscopes; s = db->scopes[s].parent) {
		const struct cp_db_scope *sc = &db->scopes[s];
		if (sc->module != module)
			return 0;
		if (sc->addr)
			return sc->addr;
	}
	return 0;
}

int cp_export_gmon(const struct cp_db *db, const struct cp_export_options *o, FILE *out)
{
	uint32_t metric;
	int rc = cp_export_start(db, o, &metric);
	if (rc)
		return rc;
	const struct cp_db_metric *met = &db->metrics[metric];
	if (!met->unit || strcmp(met->unit, "ns"))
		return cp_error(CP_EINVAL,
				"export: gmon.out holds time; %s is in %s (choose a time metric "
				"with --metric, e.g. cputime)",
				met->name, met->unit && *met->unit ? met->unit : "no unit");
	uint32_t mod = o && o->module != CP_DB_NONE ? o->module : pick_module(db, metric);
	if (mod == CP_DB_NONE || mod >= db->nmodules)
		return cp_error(CP_ENOENT, "export: the profile has no main executable to write "
					   "a gmon.out for");
	uint64_t lo = UINT64_MAX, hi = 0;
	for (size_t s = 1; s < db->nscopes; s++) {
		const struct cp_db_scope *sc = &db->scopes[s];
		if (sc->module != mod || !sc->addr)
			continue;
		lo = sc->addr < lo ? sc->addr : lo;
		hi = sc->addr + 1 > hi ? sc->addr + 1 : hi;
	}
	for (size_t p = 0; p < db->nprocs; p++)
		if (db->procs[p].module == mod && db->procs[p].entry) {
			lo = db->procs[p].entry < lo ? db->procs[p].entry : lo;
			hi = db->procs[p].entry + 1 > hi ? db->procs[p].entry + 1 : hi;
		}
	if (lo > hi)
		lo = hi = 0;
	lo &= ~(uint64_t)3;
	struct cp_gmon g;
	cp_gmon_init(&g, lo, hi + 16, 4);
	for (size_t s = 1; s < db->nscopes; s++) {
		double v = cp_export_excl(db, (uint32_t)s, metric);
		if (v == 0 || db->scopes[s].module != mod)
			continue;
		uint64_t pc = scope_pc(db, (uint32_t)s, mod);
		if (pc)
			cp_gmon_hist_add(&g, pc, v / 1e9);
	}
	int exact;
	uint64_t *calls = cp_export_call_counts(db, metric, &exact);
	for (size_t s = 1; s < db->nscopes; s++) {
		const struct cp_db_scope *sc = &db->scopes[s];
		if (sc->kind != CP_DBK_PROC || !calls[s] || sc->module != mod ||
		    sc->proc >= db->nprocs || !db->procs[sc->proc].entry)
			continue;
		uint32_t caller = cp_export_proc_frame_of(db, sc->parent);
		if (caller == CP_DB_NONE || db->scopes[caller].module != mod)
			continue;
		const struct cp_db_proc *cp = &db->procs[db->scopes[caller].proc];
		if (db->scopes[caller].proc >= db->nprocs || !cp->entry)
			continue;
		cp_gmon_arc_add(&g, cp->entry, db->procs[sc->proc].entry, calls[s]);
	}
	free(calls);
	uint32_t max_rate = met->period ? (uint32_t)(1e9 / (double)met->period) : 1000;
	if (max_rate < 1)
		max_rate = 1;
	rc = cp_gmon_write(&g, max_rate, out);
	cp_gmon_release(&g);
	return rc;
}

static int mf_metric_index(const struct cp_mf_proc *p, const char *name)
{
	for (uint32_t i = 0; i < p->hdr.nmetrics; i++)
		if (!strcmp(p->hdr.metrics[i].name, name))
			return (int)i;
	return -1;
}

static void collect_thread(struct cp_gmon *g, const struct cp_mf_thr *th, uint32_t module,
			   int calls, int cpu)
{
	uint32_t nm = th->hdr.nmetrics;
	for (size_t i = 0; i < th->nnodes; i++) {
		const struct cp_mf_rnode *n = &th->nodes[i];
		if (n->kind != CP_MF_NODE_PC || n->module != module)
			continue;
		const uint64_t *v = th->values + i * nm;
		if (cpu >= 0 && v[cpu])
			cp_gmon_hist_add(g, n->offset, (double)v[cpu] / 1e9);
		if (!v[calls] || n->parent >= th->nnodes)
			continue;
		const struct cp_mf_rnode *site = &th->nodes[n->parent];
		if (site->kind == CP_MF_NODE_CALL && site->module == module)
			cp_gmon_arc_add(g, site->offset, n->offset, v[calls]);
	}
}

/* Arcs and histogram of one process image; the first one that ran exe sets the range. */
static void collect_image(struct cp_gmon *g, int *started, uint64_t *period,
			  const struct cp_mf_image *im, const char *exe)
{
	const struct cp_mf_proc *p = &im->proc;
	const struct cp_mf_module_info *m = NULL;
	for (size_t i = 0; i < p->nmodules && !m; i++)
		if (p->modules[i].path && !strcmp(p->modules[i].path, exe))
			m = &p->modules[i];
	int calls = mf_metric_index(p, "calls"), cpu = mf_metric_index(p, "cputime");
	if (!m || calls < 0)
		return;
	if (!*started) {
		cp_gmon_init(g, (m->text_lo - m->bias) & ~(uint64_t)3, m->text_hi - m->bias, 4);
		*period = cpu >= 0 ? p->hdr.metrics[cpu].period : 0;
		*started = 1;
	}
	for (size_t t = 0; t < im->nthreads; t++)
		collect_thread(g, &im->threads[t], m->id, calls, cpu);
}

int cp_gmon_from_measurement(struct cp_gmon *g, const char *dir, const char *exe, uint32_t *rate)
{
	struct cp_mf_dir d;
	int started = 0;
	uint64_t period = 0;
	memset(g, 0, sizeof(*g));
	int rc = cp_mf_dir_open(&d, dir);
	if (rc)
		return rc;
	for (size_t i = 0; i < d.nimages; i++)
		collect_image(g, &started, &period, &d.images[i], exe);
	cp_mf_dir_release(&d);
	if (!started)
		return cp_error(CP_ENOENT, "no profile of %s was recorded", exe);
	uint32_t hz = period ? (uint32_t)(1000000000ull / period) : 1000;
	*rate = hz ? hz : 1;
	return 0;
}

int cp_gmon_write_file(const struct cp_gmon *g, uint32_t max_rate, const char *path)
{
	FILE *f = fopen(path, "wb");
	if (!f)
		return cp_error(CP_EIO, "cannot write %s: %s", path, strerror(errno));
	int rc = cp_gmon_write(g, max_rate, f);
	if (fclose(f) && !rc)
		rc = cp_error(CP_EIO, "cannot write %s: %s", path, strerror(errno));
	return rc;
}
