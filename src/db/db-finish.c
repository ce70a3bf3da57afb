/* cp_db_finish (db.h): each profile's values sorted and merged, then the statistics of
 * every scope over the profiles: exclusive ones on a second thread, inclusive ones on the
 * calling thread. Each statistic is updated by one thread, profile after profile, with
 * the same additions in the same order as one thread would make: the result does not
 * depend on the threads. */
#include "db/db-impl.h"

#include "base/xalloc.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static int value_cmp(const void *a, const void *b)
{
	const struct cp_db_value *x = a, *y = b;
	if (x->scope != y->scope)
		return x->scope < y->scope ? -1 : 1;
	if (x->metric != y->metric)
		return x->metric < y->metric ? -1 : 1;
	return 0;
}

static void pvalues_merge(struct cp_db_pvalues *pv)
{
	if (!pv->sorted) {
		qsort(pv->v, pv->n, sizeof *pv->v, value_cmp);
		pv->sorted = 1;
	}
	size_t o = 0;
	for (size_t i = 0; i < pv->n; i++) {
		if (o && pv->v[o - 1].scope == pv->v[i].scope &&
		    pv->v[o - 1].metric == pv->v[i].metric)
			pv->v[o - 1].value += pv->v[i].value;
		else
			pv->v[o++] = pv->v[i];
	}
	size_t k = 0; /* values that cancelled out are not stored */
	for (size_t i = 0; i < o; i++)
		if (pv->v[i].value != 0)
			pv->v[k++] = pv->v[i];
	pv->n = k;
}

/* Welford's running mean and sum of squared deviations, in mean and stddev until
 * stats_final(). */
static void stat_update(struct cp_db_stat *st, double x, uint32_t profile)
{
	st->sum += x;
	if (!st->count || x < st->min)
		st->min = x;
	if (!st->count || x > st->max) {
		st->max = x;
		st->argmax = profile;
	}
	st->count++;
	double d = x - st->mean;
	st->mean += d / st->count;
	st->stddev += d * (x - st->mean);
}

static void stats_final(struct cp_db_stat *st, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (st[i].count) {
			double var = st[i].stddev / st[i].count;
			st[i].stddev = var > 0 ? sqrt(var) : 0;
		} else {
			memset(&st[i], 0, sizeof st[i]);
			st[i].argmax = CP_DB_NONE;
		}
	}
}

static int u32_desc(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? 1 : x > y ? -1 : 0;
}

/* The walks over one profile's values (db-impl.h). The tree is read through compact copies
 * of the scopes' parents and frame flags (the walks to the root are the random reads). */
struct cp_db_walk {
	const struct cp_db *db;
	uint32_t *parent;
	uint8_t *frame; /* FRAME_STOP: PROC or PARTIAL, where exclusive costs stop;
			 * FRAME_LOOP: a loop, where a loop's own metric stops */
	uint8_t *own;	/* [nraw]: a loop probe's metric (loop-iterations...) */
	size_t nraw;
	double *acc;   /* [nscopes * nraw] scratch, zero between profiles */
	uint8_t *mark; /* [nscopes] */
	uint32_t *touched;
	size_t ntouched;
};

enum { FRAME_STOP = 1, FRAME_LOOP = 2 };

struct cp_db_walk *cp_db_walk_new(const struct cp_db *db)
{
	struct cp_db_walk *x = xcalloc(1, sizeof *x);
	size_t ns = db->nscopes ? db->nscopes : 1, nraw = cp_db_nraw(db);
	x->db = db;
	x->nraw = nraw;
	x->parent = xmalloc(ns * sizeof *x->parent);
	x->frame = xmalloc(ns);
	x->own = xcalloc(nraw + 1, 1);
	for (size_t s = 0; s < db->nscopes; s++) {
		uint32_t k = db->scopes[s].kind;
		x->parent[s] = db->scopes[s].parent;
		x->frame[s] = k == CP_DBK_PROC || k == CP_DBK_PARTIAL ? FRAME_STOP
			      : k == CP_DBK_LOOP		      ? FRAME_LOOP
								      : 0;
	}
	for (size_t m = 0; m < nraw; m++)
		x->own[m] = (uint8_t)cp_db_metric_loop_own(db, (uint32_t)m);
	x->acc = xcalloc(ns * (nraw ? nraw : 1), sizeof *x->acc);
	x->mark = xcalloc(ns, 1);
	x->touched = xmalloc(ns * sizeof *x->touched);
	return x;
}

void cp_db_walk_free(struct cp_db_walk *x)
{
	if (!x)
		return;
	free(x->parent);
	free(x->frame);
	free(x->own);
	free(x->acc);
	free(x->mark);
	free(x->touched);
	free(x);
}

static void mark(struct cp_db_walk *x, uint32_t s)
{
	x->mark[s] = 1;
	x->touched[x->ntouched++] = s;
}

/* The touched scopes children first: decreasing ids (a child's id is larger than its
 * parent's); a sort when very few were touched, else a scan of the marks (a byte per
 * scope, read in sequence, costs far less than a comparison in a sort). */
static size_t touched_order(struct cp_db_walk *x)
{
	size_t nt = x->ntouched, ns = x->db->nscopes;
	if (nt * 64 < ns) {
		qsort(x->touched, nt, sizeof *x->touched, u32_desc);
		return nt;
	}
	nt = 0;
	for (size_t s = ns; s-- > 0;)
		if (x->mark[s])
			x->touched[nt++] = (uint32_t)s;
	return nt;
}

/* Exclusive is HPCToolkit's: the cost of the scope's own code, i.e. of the statements
 * below it in the same procedure frame (nested loops and inlined code included, calls
 * not): a value at a statement counts for it and each ancestor up to its frame. A loop
 * probe's metric (loop-iterations, loop-entries, loop-time: counted at the loop's header)
 * describes that loop alone: it stops at the nearest loop, so an enclosing loop does not
 * add its nested loops' iterations, entries and time to its own. */
static void profile_excl(struct cp_db_walk *x, uint32_t p, cp_db_emit_fn emit, void *ctx)
{
	const struct cp_db_pvalues *pv = &x->db->pvalues[p];
	size_t nraw = x->nraw;
	x->ntouched = 0;
	for (size_t i = 0; i < pv->n; i++) {
		const struct cp_db_value *v = &pv->v[i];
		for (uint32_t s = v->scope; s != CP_DB_NONE; s = x->parent[s]) {
			x->acc[(size_t)s * nraw + v->metric] += v->value;
			if (!x->mark[s])
				mark(x, s);
			if (x->frame[s] == FRAME_STOP ||
			    (x->frame[s] == FRAME_LOOP && x->own[v->metric]))
				break;
		}
	}
	size_t nt = touched_order(x);
	for (size_t i = 0; i < nt; i++) {
		uint32_t s = x->touched[i];
		double *row = &x->acc[(size_t)s * nraw];
		for (size_t m = 0; m < nraw; m++) {
			if (row[m] != 0)
				emit(ctx, s, (uint32_t)m, row[m], p);
			row[m] = 0;
		}
		x->mark[s] = 0;
	}
}

/* Inclusive: the profile's values summed over the subtrees of the scopes on the paths from
 * its valued scopes to the root (only those are touched). */
static void profile_incl(struct cp_db_walk *x, uint32_t p, cp_db_emit_fn emit, void *ctx)
{
	const struct cp_db_pvalues *pv = &x->db->pvalues[p];
	size_t nraw = x->nraw;
	x->ntouched = 0;
	for (size_t i = 0; i < pv->n; i++) {
		const struct cp_db_value *v = &pv->v[i];
		x->acc[(size_t)v->scope * nraw + v->metric] += v->value;
		for (uint32_t s = v->scope; s != CP_DB_NONE && !x->mark[s]; s = x->parent[s])
			mark(x, s);
	}
	size_t nt = touched_order(x);
	for (size_t i = 0; i < nt; i++) {
		uint32_t s = x->touched[i], par = x->parent[s];
		double *row = &x->acc[(size_t)s * nraw];
		for (size_t m = 0; m < nraw; m++) {
			if (row[m] == 0)
				continue;
			emit(ctx, s, (uint32_t)m, row[m], p);
			if (par != CP_DB_NONE)
				x->acc[(size_t)par * nraw + m] += row[m];
			row[m] = 0;
		}
		x->mark[s] = 0;
	}
}

void cp_db_walk_profile(struct cp_db_walk *x, uint32_t p, int incl, cp_db_emit_fn emit, void *ctx)
{
	if (p >= x->db->nprofiles)
		return;
	if (incl)
		profile_incl(x, p, emit, ctx);
	else
		profile_excl(x, p, emit, ctx);
}

/* One kind of statistics (exclusive or inclusive) over every profile. */
struct pass_job {
	struct cp_db_walk *x;
	int incl;
	struct cp_db_stat *stats; /* [nscopes * nraw] */
};

static void stat_emit(void *ctx, uint32_t s, uint32_t m, double v, uint32_t p)
{
	struct pass_job *j = ctx;
	stat_update(&j->stats[(size_t)s * j->x->nraw + m], v, p);
}

static void *pass_run(void *arg)
{
	struct pass_job *j = arg;
	for (uint32_t p = 0; p < j->x->db->nprofiles; p++)
		cp_db_walk_profile(j->x, p, j->incl, stat_emit, j);
	return NULL;
}

struct merge_job {
	struct cp_db *db;
	size_t lo, hi;
};

static void *merge_run(void *arg)
{
	struct merge_job *j = arg;
	for (size_t p = j->lo; p < j->hi; p++)
		pvalues_merge(&j->db->pvalues[p]);
	return NULL;
}

/* run(a) on a second thread and run(b) here; both here when the work is small or no
 * thread can be made. */
static void run_two(void *(*run)(void *), void *a, void *b, int threads)
{
	pthread_t tid;
	int started = threads && !pthread_create(&tid, NULL, run, a);
	run(b);
	if (started)
		pthread_join(tid, NULL);
	else
		run(a);
}

/* The exclusive and inclusive statistics of the raw metrics, into db->stats. */
static void raw_stats(struct cp_db *db, size_t nraw, int threads)
{
	size_t ns = db->nscopes, nm = db->nmetrics;
	struct pass_job ex = {cp_db_walk_new(db), 0, NULL}, in = {cp_db_walk_new(db), 1, NULL};
	ex.stats = xcalloc(ns * nraw + 1, sizeof *ex.stats);
	in.stats = xcalloc(ns * nraw + 1, sizeof *in.stats);
	run_two(pass_run, &ex, &in, threads);
	for (size_t s = 0; s < ns; s++)
		for (size_t m = 0; m < nraw; m++) {
			db->stats[(s * nm + m) * 2] = ex.stats[s * nraw + m];
			db->stats[(s * nm + m) * 2 + 1] = in.stats[s * nraw + m];
		}
	free(ex.stats);
	free(in.stats);
	cp_db_walk_free(ex.x);
	cp_db_walk_free(in.x);
}

/* Below this many values one thread does it all (a thread costs more than it saves). */
#define THREADS_MIN_VALUES 100000

int cp_db_finish(struct cp_db *db)
{
	if (db->finished)
		return 0;
	size_t nraw = cp_db_nraw(db), nm = db->nmetrics, ns = db->nscopes, nvalues = 0;
	for (size_t p = 0; p < db->nprofiles; p++)
		nvalues += db->pvalues[p].n;
	int threads = nvalues >= THREADS_MIN_VALUES;
	struct merge_job m1 = {db, 0, db->nprofiles / 2},
			 m2 = {db, db->nprofiles / 2, db->nprofiles};
	run_two(merge_run, &m1, &m2, threads);
	free(db->stats);
	db->stats = xcalloc(ns * nm * 2 + 1, sizeof *db->stats);
	raw_stats(db, nraw, threads);
	stats_final(db->stats, ns * nm * 2);
	for (size_t m = 0; m < nraw && m < CP_DB_MAX_METRICS; m++) {
		uint64_t n = 0;
		for (size_t p = 0; p < db->nprofiles; p++)
			n += db->profiles[p].samples[m];
		if (n) /* else keep what the producer set */
			db->metrics[m].samples = n;
	}
	for (size_t m = nraw; m < nm; m++)
		cp_db_derived_compute(db, (uint32_t)m);
	db->finished = 1;
	return 0;
}
