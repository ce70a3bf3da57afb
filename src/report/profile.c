/* A profile database -> the report's profile: thread selection, summary, top-down view
 * (the database's scope tree, node i = scope i) and the statistics of derived views. */
#include "report/profile.h"

#include "base/error.h"
#include "base/xalloc.h"
#include "db/analyze.h"
#include "db/expr.h"
#include "report/report.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *db_str(struct cp_profile *p, const char *s)
{
	return s ? cp_intern(&p->pool, s) : NULL;
}

static const char *db_file(struct cp_profile *p, uint32_t file)
{
	return file < p->db.nfiles ? db_str(p, p->db.files[file].path) : NULL;
}

/* A loop without line information: "loop at [module+0xHEADER]". */
static const char *loop_addr_name(struct cp_profile *p, const struct cp_db_scope *s)
{
	const char *mod = s->module < p->db.nmodules ? p->db.modules[s->module].name : NULL;
	char buf[300];
	snprintf(buf, sizeof buf, "loop at [%s+0x%llx]", mod ? mod : "?",
		 (unsigned long long)s->addr);
	return cp_intern(&p->pool, buf);
}

/* After the scopes: a <no line> leaf for each scope that has children and costs of its
 * own in some profile (code without line information: a statement is made only where
 * there is a line), so that the view's costs are all on leaves and --flatten and the
 * derived views lose none of them. */
static void td_own_leaves(struct cp_profile *p)
{
	const struct cp_db *db = &p->db;
	p->own_leaf = xmalloc((db->nscopes + 1) * sizeof(*p->own_leaf));
	memset(p->own_leaf, 0xff, (db->nscopes + 1) * sizeof(*p->own_leaf));
	const char *name = cp_intern(&p->pool, CP_VIEW_NO_LINE);
	for (size_t prof = 0; prof < db->nprofiles; prof++) {
		const struct cp_db_pvalues *pv = &db->pvalues[prof];
		for (size_t k = 0; k < pv->n; k++) {
			uint32_t s = pv->v[k].scope;
			if (s >= db->nscopes || p->own_leaf[s] != UINT32_MAX ||
			    p->td.nodes[s].first_child == UINT32_MAX)
				continue;
			p->own_leaf[s] = cp_view_append(&p->td, s, CP_VK_LINE, name,
							p->td.nodes[s].module, NULL, 0);
		}
	}
}

/* The top-down view's nodes: one per database scope, in scope order. */
static void td_build(struct cp_profile *p)
{
	const struct cp_db *db = &p->db;
	struct cp_view *v = &p->td;
	cp_view_init(v, db->nmetrics, &p->pool);
	for (uint32_t m = 0; m < db->nmetrics && m < 64; m++)
		if (cp_db_metric_loop_own(db, m))
			v->loop_own |= 1ull << m;
	for (uint32_t i = 1; i < db->nscopes; i++) {
		const struct cp_db_scope *s = &db->scopes[i];
		const char *module =
		    s->module < db->nmodules ? db_str(p, db->modules[s->module].path) : NULL;
		const char *file = db_file(p, s->file);
		const char *name = NULL;
		enum cp_vkind kind;
		int line = (int)s->line, line_end = 0;
		switch (s->kind) {
		case CP_DBK_PROC:
		case CP_DBK_INLINE:
			kind = s->kind == CP_DBK_PROC ? CP_VK_PROCEDURE : CP_VK_INLINED;
			name = s->proc < db->nprocs ? db_str(p, db->procs[s->proc].name) : NULL;
			if (!name)
				name = cp_intern(&p->pool, "<unknown procedure>");
			break;
		case CP_DBK_LOOP:
			kind = CP_VK_LOOP;
			line = (int)(s->line_lo ? s->line_lo : s->line);
			line_end = (int)s->line_hi;
			name = file || line ? cp_view_loop_name(&p->pool, file, line, line_end)
					    : loop_addr_name(p, s);
			break;
		case CP_DBK_STMT:
			kind = CP_VK_LINE;
			name = cp_view_line_name(&p->pool, file, line);
			break;
		default:
			kind = CP_VK_PARTIAL;
			name = cp_intern(&p->pool, "<partial call paths>");
			module = file = NULL;
			line = 0;
			break;
		}
		uint32_t parent = s->parent < i ? s->parent : 0;
		uint32_t x = cp_view_append(v, parent, kind, name, module, file, line);
		v->nodes[x].line_end = line_end;
	}
	td_own_leaves(p);
}

/* Adds the exclusive values of profile prof (raw metrics) to the statements (and <no line>
 * leaves) of v, a view of the top-down shape. */
static void td_add_profile(const struct cp_profile *p, struct cp_view *v, uint32_t prof)
{
	const struct cp_db *db = &p->db;
	size_t nraw = cp_db_nraw(db);
	const struct cp_db_pvalues *pv = &db->pvalues[prof];
	for (size_t k = 0; k < pv->n; k++) {
		const struct cp_db_value *x = &pv->v[k];
		if (x->scope >= db->nscopes || x->metric >= nraw)
			continue;
		uint32_t at =
		    p->own_leaf[x->scope] != UINT32_MAX ? p->own_leaf[x->scope] : x->scope;
		cp_view_excl(v, at)[x->metric] += x->value;
	}
}

static uint32_t formula_lookup(void *ctx, const char *name, size_t len)
{
	const struct cp_db *db = ctx;
	for (uint32_t m = 0; m < db->nmetrics; m++)
		if (strlen(db->metrics[m].name) == len && !memcmp(db->metrics[m].name, name, len))
			return m;
	return UINT32_MAX;
}

void cp_profile_eval_derived(const struct cp_profile *p, struct cp_view *v)
{
	for (size_t m = 0; m < v->nmetrics; m++) {
		if (!p->formulas[m])
			continue;
		for (uint32_t i = 0; i < v->n; i++) {
			cp_view_incl(v, i)[m] = cp_expr_eval(p->formulas[m], cp_view_incl(v, i));
			cp_view_excl(v, i)[m] = cp_expr_eval(p->formulas[m], cp_view_excl(v, i));
		}
	}
}

static int int_cmp(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return x < y ? -1 : x > y;
}

/* MPI ranks: the distinct ranks of the profiles. */
static size_t count_ranks(const struct cp_db *db)
{
	int *r = xmalloc((db->nprofiles + 1) * sizeof(*r));
	size_t n = 0, k = 0;
	for (size_t i = 0; i < db->nprofiles; i++)
		if (db->profiles[i].rank >= 0)
			r[k++] = db->profiles[i].rank;
	qsort(r, k, sizeof(*r), int_cmp);
	for (size_t i = 0; i < k; i++)
		n += !i || r[i] != r[i - 1];
	free(r);
	return n;
}

static void summary_build(struct cp_profile *p, const char *name)
{
	const struct cp_db *db = &p->db;
	struct cp_summary *s = &p->sum;
	memset(s, 0, sizeof *s);
	s->dir = db_str(p, db->run.measurement_dir ? db->run.measurement_dir : name);
	s->command = db_str(p, db->run.command ? db->run.command : "");
	s->host = db_str(p, db->run.host);
	s->nprocs = db->run.nprocs;
	s->nranks = count_ranks(db);
	s->nforked = db->run.nforked;
	s->nexeced = db->run.nexeced;
	s->duration_s = db->run.duration_s;
	s->process_cpu_ns = db->run.process_cpu_ns;
	s->startup_ns = db->run.startup_ns;
	s->runtime_ns = db->run.runtime_ns;
	s->images_cpu_unknown = db->run.images_cpu_unknown;
	s->notes = db->run.notes;
	s->nnotes = db->run.nnotes;
	s->warnings = db->run.warnings;
	s->nwarnings = db->run.nwarnings;
	s->nmetrics = db->nmetrics;
	s->nraw = cp_db_nraw(db);
	s->metrics = xcalloc(db->nmetrics + 1, sizeof(*s->metrics));
	s->nthreads_total = db->nprofiles;
	for (size_t m = 0; m < db->nmetrics; m++) {
		const struct cp_db_metric *dm = &db->metrics[m];
		struct cp_metric_desc *md = &s->metrics[m];
		md->name = db_str(p, dm->name);
		md->unit = db_str(p, dm->unit ? dm->unit : "");
		md->formula = db_str(p, dm->formula);
		md->source = dm->source;
		md->mechanism = dm->mechanism;
		md->period = dm->period;
	}
	uint64_t samples_all[CP_DB_MAX_METRICS] = {0};
	for (size_t i = 0; i < db->nprofiles; i++) {
		const struct cp_db_profile *pr = &db->profiles[i];
		for (size_t m = 0; m < s->nraw && m < CP_DB_MAX_METRICS; m++)
			samples_all[m] += pr->samples[m];
		if (!p->selected[i])
			continue;
		s->nthreads++;
		s->cpu_ns += pr->cpu_ns;
		s->threads_without_cpu += !pr->cpu_ns;
		s->unwind_complete += pr->unwind_complete;
		s->unwind_partial += pr->unwind_partial;
		s->unwind_failed += pr->unwind_failed;
		s->dropped += pr->dropped;
		s->frames += pr->frames;
		for (size_t m = 0; m < s->nraw && m < CP_DB_MAX_METRICS; m++)
			s->metrics[m].samples += pr->samples[m];
	}
	/* a database whose profiles do not count samples (hand-made ones) */
	for (size_t m = 0; m < s->nraw && m < CP_DB_MAX_METRICS; m++)
		if (!samples_all[m] && s->nthreads == s->nthreads_total)
			s->metrics[m].samples = db->metrics[m].samples;
}

/* Does MPI rank `rank` have a profile? A rank is every image that carries its rank (its
 * program, and under `record -- mpirun` the launcher's fork child that exec'd it). */
static int rank_present(const struct cp_db *db, int rank)
{
	for (size_t i = 0; i < db->nprofiles; i++)
		if (db->profiles[i].rank == rank)
			return 1;
	return 0;
}

/* What the summary tells of each measured metric: its total and, for probes, how many
 * procedures it was measured in. */
static void summary_totals(struct cp_profile *p)
{
	const struct cp_db *db = &p->db;
	uint8_t *seen = xcalloc(db->nprocs + 1, 1);
	for (size_t m = 0; m < p->sum.nraw && m < p->td.nmetrics; m++) {
		struct cp_metric_desc *md = &p->sum.metrics[m];
		md->total = cp_view_incl(&p->td, 0)[m];
		if (md->source != CP_MF_SRC_PROBE)
			continue;
		memset(seen, 0, db->nprocs + 1);
		for (uint32_t i = 0; i < db->nscopes && i < p->td.n; i++) {
			const struct cp_db_scope *sc = &db->scopes[i];
			if (sc->kind != CP_DBK_PROC || sc->proc >= db->nprocs || seen[sc->proc] ||
			    !(cp_view_excl(&p->td, i)[m] > 0))
				continue;
			seen[sc->proc] = 1;
			md->nprocs++;
		}
	}
	free(seen);
}

int cp_profile_from_db(struct cp_profile *p, struct cp_db *db, const char *name, int thread,
		       int pid, const char *const *derived, size_t nderived)
{
	memset(p, 0, sizeof *p);
	cp_intern_init(&p->pool);
	p->db = *db;
	memset(db, 0, sizeof *db);
	cp_view_init(&p->td, 0, &p->pool);
	int rc = 0;
	for (size_t i = 0; i < nderived && !rc; i++)
		if ((rc = cp_db_derived_add_spec(&p->db, derived[i])) > 0)
			rc = 0;
	if (rc < 0)
		return rc;
	if (!p->db.finished && (rc = cp_db_finish(&p->db)) < 0)
		return rc;
	int rank = pid < 0 ? -2 - pid : -1;
	if (rank >= 0 && !rank_present(&p->db, rank))
		return cp_error(CP_ENOENT, "--rank: no MPI rank %d in %s", rank, name);
	if (rank >= 0)
		pid = 0;
	p->selected = xcalloc(p->db.nprofiles + 1, 1);
	size_t nsel = 0;
	for (size_t i = 0; i < p->db.nprofiles; i++) {
		const struct cp_db_profile *pr = &p->db.profiles[i];
		p->selected[i] = (thread < 0 || (int)pr->tidx == thread) &&
				 (!pid || pr->pid == pid) && (rank < 0 || pr->rank == rank);
		nsel += p->selected[i];
	}
	if (!nsel && thread < 0 && pid)
		return cp_error(CP_ENOENT, "--thread: no process %d in %s", pid, name);
	if (!nsel && thread >= 0)
		return cp_error(CP_ENOENT, "--thread: no thread %d%s in %s (it has %zu threads)",
				thread,
				pid	    ? " in that process"
				: rank >= 0 ? " in that rank"
					    : "",
				name, p->db.nprofiles);
	p->formulas = xcalloc(p->db.nmetrics + 1, sizeof(*p->formulas));
	for (size_t m = 0; m < p->db.nmetrics; m++) {
		const struct cp_db_metric *dm = &p->db.metrics[m];
		if (dm->kind == CP_DB_METRIC_DERIVED && dm->formula &&
		    (rc = cp_expr_parse(dm->formula, formula_lookup, &p->db, &p->formulas[m])) < 0)
			return rc;
	}
	summary_build(p, name);
	cp_view_release(&p->td);
	td_build(p);
	for (uint32_t i = 0; i < p->db.nprofiles; i++)
		if (p->selected[i])
			td_add_profile(p, &p->td, i);
	cp_view_sum_inclusive(&p->td);
	cp_profile_eval_derived(p, &p->td);
	summary_totals(p);
	return 0;
}

int cp_profile_load(struct cp_profile *p, const char *path, int thread, int pid,
		    const char *const *derived, size_t nderived, FILE *progress, int no_write)
{
	struct cp_analyze_options o;
	struct cp_db db;
	cp_analyze_options_init(&o);
	o.progress = progress;
	o.no_write = no_write;
	memset(&db, 0, sizeof db);
	memset(p, 0, sizeof *p);
	int rc = cp_profile_open(path, &o, &db);
	if (rc) {
		cp_intern_init(&p->pool);
		cp_view_init(&p->td, 0, &p->pool);
		return rc;
	}
	return cp_profile_from_db(p, &db, path, thread, pid, derived, nderived);
}

void cp_profile_release(struct cp_profile *p)
{
	if (p->formulas)
		for (size_t m = 0; m < p->db.nmetrics; m++)
			cp_expr_free(p->formulas[m]);
	free(p->formulas);
	free(p->selected);
	free(p->own_leaf);
	free(p->sum.metrics);
	cp_view_release(&p->td);
	cp_db_release(&p->db);
	cp_intern_release(&p->pool);
	memset(p, 0, sizeof *p);
}

/* ---- views and their statistics over threads ---- */

/* A top-down view of the same shape as p->td, with zero values. */
static void td_shape(const struct cp_profile *p, struct cp_view *v)
{
	const struct cp_view *td = &p->td;
	cp_view_init(v, td->nmetrics, td->pool);
	v->loop_own = td->loop_own;
	for (uint32_t i = 1; i < td->n; i++) {
		const struct cp_vnode *n = &td->nodes[i];
		uint32_t x =
		    cp_view_append(v, n->parent, n->kind, n->name, n->module, n->file, n->line);
		v->nodes[x].line_end = n->line_end;
	}
}

struct acc {
	double sum, min, max, sumsq;
	uint32_t count;
};

static void acc_add(struct acc *a, double x)
{
	if (x == 0 || isnan(x))
		return;
	if (!a->count || x < a->min)
		a->min = x;
	if (!a->count || x > a->max)
		a->max = x;
	a->count++;
	a->sum += x;
	a->sumsq += x * x;
}

static double acc_value(const struct acc *a, int stat)
{
	if (!a->count)
		return 0;
	double mean = a->sum / a->count;
	switch (stat) {
	case CP_DB_STAT_MEAN:
		return mean;
	case CP_DB_STAT_MIN:
		return a->min;
	case CP_DB_STAT_MAX:
		return a->max;
	case CP_DB_STAT_STDDEV: {
		double var = a->sumsq / a->count - mean * mean;
		return var > 0 ? sqrt(var) : 0;
	}
	default:
		return a->sum;
	}
}

/* The values of profiles members[0..n) summed in the top-down shape: one (own values,
 * then sums). */
static void td_group(const struct cp_profile *p, const uint32_t *members, size_t n,
		     struct cp_view *one)
{
	size_t nm = p->td.nmetrics;
	memset(one->incl, 0, one->n * nm * sizeof(double));
	memset(one->excl, 0, one->n * nm * sizeof(double));
	for (size_t i = 0; i < n; i++)
		td_add_profile(p, one, members[i]);
	cp_view_sum_inclusive(one);
}

static const struct cp_db *group_db; /* for group_cmp (qsort has no context) */

static int group_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	int rx = group_db->profiles[x].rank, ry = group_db->profiles[y].rank;
	if (rx != ry)
		return rx < ry ? -1 : 1;
	return x < y ? -1 : x > y;
}

/* The groups statistics run over: the selected profiles in order[], group g is
 * order[start[g] .. start[g+1]); each profile alone, or with by_rank each MPI rank's
 * profiles together (a profile without a rank alone). Returns the number of groups;
 * order and start need nprofiles + 1 entries. */
static size_t stat_groups(const struct cp_profile *p, int by_rank, uint32_t *order, uint32_t *start)
{
	size_t n = 0, ng = 0;
	for (uint32_t i = 0; i < p->db.nprofiles; i++)
		if (p->selected[i])
			order[n++] = i;
	if (by_rank) {
		group_db = &p->db;
		qsort(order, n, sizeof *order, group_cmp);
	}
	for (size_t i = 0; i < n; i++) {
		int r = p->db.profiles[order[i]].rank;
		if (!i || !by_rank || r < 0 || r != p->db.profiles[order[i - 1]].rank)
			start[ng++] = (uint32_t)i;
	}
	start[ng] = (uint32_t)n;
	return ng;
}

void cp_profile_rank_stats(const struct cp_profile *p, size_t m, const uint32_t *nodes, size_t n,
			   struct cp_rank_stat *out)
{
	uint32_t *order = xmalloc((p->db.nprofiles + 1) * sizeof *order);
	uint32_t *start = xmalloc((p->db.nprofiles + 2) * sizeof *start);
	size_t ng = stat_groups(p, 1, order, start);
	struct cp_view one;
	td_shape(p, &one);
	memset(out, 0, n * sizeof *out);
	for (size_t i = 0; i < n; i++)
		out[i].argmax = -1;
	for (size_t g = 0; g < ng; g++) {
		int rank = p->db.profiles[order[start[g]]].rank;
		if (rank < 0)
			continue;
		td_group(p, order + start[g], start[g + 1] - start[g], &one);
		for (size_t i = 0; i < n; i++) {
			double x = cp_view_incl(&one, nodes[i])[m];
			struct cp_rank_stat *st = &out[i];
			if (!(x > 0))
				continue;
			if (!st->count || x < st->min)
				st->min = x;
			if (!st->count || x > st->max)
				st->max = x, st->argmax = rank;
			st->mean += x;
			st->count++;
		}
	}
	for (size_t i = 0; i < n; i++)
		out[i].mean = out[i].count ? out[i].mean / out[i].count : 0;
	cp_view_release(&one);
	free(order);
	free(start);
}

/* A derived view's raw values (nraw metrics per node) for the group whose top-down values
 * are in one, through the contributions rec; credit (bottom-up: one.n * nraw scratch, else
 * NULL). Node `only` alone into vin/vex[0..nraw), or every node (only == UINT32_MAX). vin and
 * vex must be zero. */
static void group_contribs(const struct cp_view *one, const struct cp_view_contribs *rec,
			   double *credit, size_t nraw, uint32_t only, double *vin, double *vex)
{
	if (credit) {
		memset(credit, 0, one->n * nraw * sizeof(double));
		for (uint32_t j = 1; j < one->n; j++)
			if (rec->outer_of[j] != UINT32_MAX)
				for (size_t m = 0; m < nraw; m++)
					credit[(size_t)rec->outer_of[j] * nraw + m] +=
					    cp_view_excl(one, j)[m];
	}
	for (size_t k = 0; k < rec->n; k++) {
		const struct cp_view_contrib *c = &rec->v[k];
		if (only != UINT32_MAX && c->node != only)
			continue;
		size_t at = only == UINT32_MAX ? (size_t)c->node * nraw : 0;
		const double *si = credit ? cp_view_incl(one, c->src) : cp_view_excl(one, c->src);
		const double *se =
		    credit ? credit + (size_t)c->src * nraw : cp_view_excl(one, c->src);
		for (size_t m = 0; m < nraw; m++) {
			vin[at + m] += si[m];
			if (c->excl)
				vex[at + m] += se[m];
		}
	}
	if (only == UINT32_MAX || only == 0)
		for (size_t m = 0; m < nraw; m++)
			vin[m] = cp_view_incl(one, 0)[m];
}

void cp_profile_thread_values(const struct cp_profile *p, int kind,
			      const struct cp_view_contribs *rec, uint32_t node, double *incl,
			      double *excl)
{
	size_t nraw = p->sum.nraw, np = p->db.nprofiles;
	struct cp_view one;
	td_shape(p, &one);
	double *credit =
	    kind == CP_VIEW_BOTTOM_UP ? xmalloc((one.n * nraw + 1) * sizeof(double)) : NULL;
	memset(incl, 0, np * nraw * sizeof(double));
	memset(excl, 0, np * nraw * sizeof(double));
	for (uint32_t pr = 0; pr < np; pr++) {
		td_group(p, &pr, 1, &one);
		group_contribs(&one, rec, credit, nraw, node, incl + (size_t)pr * nraw,
			       excl + (size_t)pr * nraw);
	}
	free(credit);
	cp_view_release(&one);
}

void cp_profile_view(const struct cp_profile *p, int kind, int stat,
		     const struct cp_view_limits *lim, struct cp_view *out)
{
	size_t nm = p->td.nmetrics, nraw = p->sum.nraw;
	struct cp_view_contribs rec;
	memset(&rec, 0, sizeof rec);
	struct cp_view one;
	td_shape(p, &one);
	uint32_t *order = xmalloc((p->db.nprofiles + 1) * sizeof *order);
	uint32_t *start = xmalloc((p->db.nprofiles + 2) * sizeof *start);
	size_t ng = stat_groups(p, p->stat_by_rank, order, start);
	struct cp_view_limits l = {0, 0, 0};
	if (lim)
		l = *lim;
	if (stat != CP_DB_STAT_SUM && l.min_incl > 0) {
		/* lim.min_incl is a share of the statistic's total; no row's statistic exceeds
		 * its sum, so rows whose sum is below it can be left out */
		struct acc tot = {0};
		for (size_t g = 0; g < ng; g++) {
			double t = 0;
			for (uint32_t i = start[g]; i < start[g + 1]; i++) {
				const struct cp_db_pvalues *pv = &p->db.pvalues[order[i]];
				for (size_t k = 0; k < pv->n; k++)
					if (pv->v[k].metric == l.metric)
						t += pv->v[k].value;
			}
			acc_add(&tot, t);
		}
		double total = cp_view_incl(&p->td, 0)[l.metric];
		l.min_incl = total > 0 ? l.min_incl / total * acc_value(&tot, stat) : 0;
	}
	struct cp_view_contribs *r = stat != CP_DB_STAT_SUM ? &rec : NULL;
	if (kind == CP_VIEW_TOP_DOWN) {
		td_shape(p, out);
		memcpy(out->incl, p->td.incl, p->td.n * nm * sizeof(double));
		memcpy(out->excl, p->td.excl, p->td.n * nm * sizeof(double));
	} else if (kind == CP_VIEW_BOTTOM_UP) {
		cp_view_bottom_up_rec(&p->td, out, lim ? &l : NULL, r);
		cp_profile_eval_derived(p, out);
	} else {
		cp_view_flat_rec(&p->td, out, r);
		cp_profile_eval_derived(p, out);
	}
	if (stat == CP_DB_STAT_SUM) {
		free(order);
		free(start);
		cp_view_release(&one);
		return;
	}
	/* each selected thread's values of the same rows, through the recorded contributions */
	struct acc *acc = xcalloc(out->n * nraw * 2 + 1, sizeof(*acc));
	double *vin = xmalloc((out->n * nraw + 1) * sizeof(double));
	double *vex = xmalloc((out->n * nraw + 1) * sizeof(double));
	double *credit =
	    kind == CP_VIEW_BOTTOM_UP ? xmalloc((one.n * nraw + 1) * sizeof(double)) : NULL;
	for (size_t g = 0; g < ng; g++) {
		td_group(p, order + start[g], start[g + 1] - start[g], &one);
		const double *in = vin, *ex = vex;
		size_t step = nraw;
		if (kind == CP_VIEW_TOP_DOWN) {
			in = one.incl, ex = one.excl, step = nm;
		} else {
			memset(vin, 0, out->n * nraw * sizeof(double));
			memset(vex, 0, out->n * nraw * sizeof(double));
			group_contribs(&one, &rec, credit, nraw, UINT32_MAX, vin, vex);
		}
		for (uint32_t i = 0; i < out->n; i++) {
			struct acc *a = acc + (size_t)i * nraw * 2;
			for (size_t m = 0; m < nraw; m++) {
				acc_add(&a[m * 2 + 1], in[(size_t)i * step + m]);
				acc_add(&a[m * 2], ex[(size_t)i * step + m]);
			}
		}
	}
	for (uint32_t i = 0; i < out->n; i++)
		for (size_t m = 0; m < nraw; m++) {
			const struct acc *a = acc + ((size_t)i * nraw + m) * 2;
			cp_view_incl(out, i)[m] = acc_value(&a[1], stat);
			cp_view_excl(out, i)[m] = acc_value(&a[0], stat);
		}
	cp_profile_eval_derived(p, out);
	free(order);
	free(start);
	free(credit);
	free(vin);
	free(vex);
	free(acc);
	cp_view_contribs_release(&rec);
	cp_view_release(&one);
}
