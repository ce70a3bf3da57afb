/* Entry points of callpath report: load a profile, derive the chosen view, render it. */
#include "report/report.h"

#include "base/error.h"
#include "base/strbuf.h"
#include "base/xalloc.h"
#include "report/profile.h"
#include "report/render.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void cp_report_options_init(struct cp_report_options *o)
{
	memset(o, 0, sizeof *o);
	o->threshold = -1;
	o->thread = CP_REPORT_ALL_THREADS;
	o->rank = -1;
	o->summary = 1;
	o->hot_path = -1;
	o->stat = CP_DB_STAT_SUM;
}

static const char *view_name(enum cp_report_view_kind k)
{
	return k == CP_VIEW_BOTTOM_UP ? "bottom-up" : k == CP_VIEW_FLAT ? "flat" : "top-down";
}

/* The metric named by a --metric item (NAME or NAME=FORMULA). */
static int metric_index(const struct cp_summary *s, const char *item, size_t *out)
{
	const char *eq = strchr(item, '=');
	size_t len = eq ? (size_t)(eq - item) : strlen(item);
	while (len && (item[len - 1] == ' ' || item[len - 1] == '\t'))
		len--;
	while (len && (*item == ' ' || *item == '\t'))
		item++, len--;
	for (size_t m = 0; m < s->nmetrics; m++)
		if (strlen(s->metrics[m].name) == len && !memcmp(s->metrics[m].name, item, len)) {
			*out = m;
			return 0;
		}
	struct strbuf list;
	strbuf_init(&list);
	for (size_t m = 0; m < s->nmetrics; m++)
		strbuf_addf(&list, "%s%s", m ? ", " : "", s->metrics[m].name);
	int rc = cp_error(CP_ENOENT, "--metric %.*s: no such metric in %s (it has: %s)", (int)len,
			  item, s->dir, list.buf);
	strbuf_release(&list);
	return rc;
}

static double threshold_of(const struct cp_report_options *o)
{
	return o->threshold >= 0 ? o->threshold : o->format == CP_FORMAT_TEXT ? 1.0 : 0.0;
}

/* The columns, sort metric and threshold metric of r from o. */
static int render_metrics(const struct cp_profile *p, const struct cp_report_options *o,
			  struct cp_render *r)
{
	const struct cp_summary *s = &p->sum;
	int rc;
	r->ncols = 0;
	for (size_t i = 0; i < o->nmetrics; i++) {
		size_t m;
		if ((rc = metric_index(s, o->metrics[i], &m)))
			return rc;
		size_t j = 0;
		while (j < r->ncols && r->cols[j] != m)
			j++;
		if (j == r->ncols)
			r->cols[r->ncols++] = m;
	}
	if (!s->nmetrics)
		return cp_error(CP_ENOENT, "%s holds no metric", s->dir);
	if (!r->ncols)
		r->cols[r->ncols++] = 0;
	r->sort_metric = r->cols[0];
	if (o->sort_metric && (rc = metric_index(s, o->sort_metric, &r->sort_metric)))
		return rc;
	/* threshold, hot path and folding by a measured metric (a ratio has no share) */
	r->metric = 0;
	if (r->sort_metric < s->nraw) {
		r->metric = r->sort_metric;
	} else {
		for (size_t c = r->ncols; c-- > 0;)
			if (r->cols[c] < s->nraw)
				r->metric = r->cols[c];
	}
	return 0;
}

/* Renders view v of profile p with options o. */
static int render(const struct cp_profile *p, const struct cp_view *v,
		  const struct cp_report_options *o, const struct cp_render *proto, FILE *out)
{
	struct cp_render r = *proto;
	struct cp_summary sum = p->sum;
	char *job = NULL;
	size_t joblen = 0;
	int whole = o->rank < 0 && o->thread < 0 && !o->thread_pid;
	FILE *jf = o->format == CP_FORMAT_TEXT && o->summary && p->sum.nranks && whole
		       ? open_memstream(&job, &joblen)
		       : NULL;
	if (jf) { /* which ranks are measured, and their MPI share */
		cp_report_print_mpi_job(p, NULL, p->sum.dir, jf, 0);
		fclose(jf);
		sum.job_text = job;
	}
	r.view = v;
	r.sum = &sum;
	r.opt = o;
	r.view_name = view_name(o->view);
	r.threshold = threshold_of(o);
	int rc = cp_render_select(&r);
	if (!rc) {
		if (o->format == CP_FORMAT_CSV)
			cp_render_csv(&r, out);
		else if (o->format == CP_FORMAT_JSON)
			cp_render_json(&r, out);
		else
			cp_render_text(&r, out);
	}
	cp_render_release(&r);
	free(job);
	return rc;
}

int cp_report_profile(const struct cp_profile *p, const struct cp_report_options *o, FILE *out)
{
	struct cp_render proto;
	memset(&proto, 0, sizeof proto);
	int rc = render_metrics(p, o, &proto);
	if (rc)
		return rc;
	if (o->view == CP_VIEW_TOP_DOWN && o->stat == CP_DB_STAT_SUM)
		return render(p, &p->td, o, &proto, out);
	struct cp_view v;
	struct cp_view_limits lim = {
	    proto.metric,
	    cp_render_min_incl(cp_view_incl(&p->td, 0)[proto.metric], threshold_of(o)), o->depth};
	if (o->flatten > 0 || o->hot_path >= 0)
		lim.min_incl = 0;
	if (o->flatten > 0)
		lim.max_depth = 0;
	cp_profile_view(p, o->view, o->stat, &lim, &v);
	rc = render(p, &v, o, &proto, out);
	cp_view_release(&v);
	return rc;
}

/* The NAME=FORMULA items of --metric. */
static size_t derived_specs(const struct cp_report_options *o, const char **specs)
{
	size_t n = 0;
	for (size_t i = 0; i < o->nmetrics; i++)
		if (strchr(o->metrics[i], '='))
			specs[n++] = o->metrics[i];
	return n;
}

int cp_report_run(const char *path, const struct cp_report_options *o, FILE *out)
{
	struct cp_profile p;
	const char *specs[CP_REPORT_MAX_METRICS];
	size_t nspecs = derived_specs(o, specs);
	if (o->view == CP_VIEW_SYNC)
		return cp_report_sync(path, o, out);
	int pid = o->rank >= 0 ? CP_PROFILE_RANK(o->rank) : o->thread_pid;
	int rc = cp_profile_load(&p, path, o->thread, pid, specs, nspecs, o->progress, o->no_write);
	p.stat_by_rank = o->stat_over_ranks;
	if (!rc)
		rc = cp_report_profile(&p, o, out);
	cp_profile_release(&p);
	return rc;
}

static const struct cp_view *hot_view;

static int excl_desc(const void *a, const void *b)
{
	double x = cp_view_excl(hot_view, *(const uint32_t *)a)[0];
	double y = cp_view_excl(hot_view, *(const uint32_t *)b)[0];
	return x > y ? -1 : x < y;
}

/* The procedures with the most exclusive cost (first metric), from the bottom-up view. */
static void print_hot_procedures(const struct cp_profile *p, FILE *out, size_t n)
{
	struct cp_view bu;
	struct cp_view_limits lim = {0, INFINITY, 1}; /* procedures only, no callers */
	cp_view_bottom_up(&p->td, &bu, &lim);
	uint32_t *procs = xmalloc((bu.n + 1) * sizeof(*procs));
	size_t k = 0;
	for (uint32_t c = bu.nodes[0].first_child; c != UINT32_MAX; c = bu.nodes[c].next_sibling)
		procs[k++] = c;
	hot_view = &bu;
	qsort(procs, k, sizeof(*procs), excl_desc);
	double total = cp_view_incl(&p->td, 0)[0];
	fprintf(out, "\nhottest procedures (%s):\n%7s %7s  %s\n", p->sum.metrics[0].name, "excl%",
		"incl%", "procedure  (module)");
	for (size_t i = 0; i < k && i < n && total > 0; i++) {
		const struct cp_vnode *x = &bu.nodes[procs[i]];
		double e = cp_view_excl(&bu, procs[i])[0];
		if (!(e > 0))
			break;
		fprintf(out, "%6.2f%% %6.2f%%  %s  (%s)\n", 100.0 * e / total,
			100.0 * cp_view_incl(&bu, procs[i])[0] / total, x->name,
			x->module ? cp_render_short(x->module) : "?");
	}
	free(procs);
	cp_view_release(&bu);
}

/* With several threads: for the contexts shown (procedure frames, inlined frames, loops),
 * how unevenly the threads that ran them share their inclusive cost (first metric), from the
 * database's statistics (td node = scope). */
static void print_imbalance(const struct cp_profile *p, const struct cp_render *r, FILE *out,
			    size_t n)
{
	const struct cp_db *db = &p->db;
	if (p->sum.nthreads < 2 || p->sum.nthreads != db->nprofiles || !db->stats)
		return;
	size_t shown = 0;
	for (size_t i = 1; i < r->rows.n && shown < n; i++) {
		uint32_t node = r->rows.rows[i].node;
		const struct cp_vnode *x = &p->td.nodes[node];
		if (x->kind != CP_VK_PROCEDURE && x->kind != CP_VK_INLINED && x->kind != CP_VK_LOOP)
			continue;
		const struct cp_db_stat *st = cp_db_stat_get(db, node, 0, 1);
		if (st->count < 2 || st->argmax >= db->nprofiles)
			continue;
		if (!shown++)
			fprintf(out,
				"\nimbalance over %zu threads (%s, inclusive, over the threads "
				"that ran "
				"each context):\n%8s %8s  %-24s  %s\n",
				db->nprofiles, p->sum.metrics[0].name, "max/min", "threads",
				"max in thread", "context");
		const struct cp_db_profile *pr = &db->profiles[st->argmax];
		char who[64];
		snprintf(who, sizeof who, "%d:%u%s%.16s%s", pr->pid, pr->tidx,
			 pr->thread_name ? " (" : "", pr->thread_name ? pr->thread_name : "",
			 pr->thread_name ? ")" : "");
		char ratio[32];
		if (st->min > 0)
			snprintf(ratio, sizeof ratio, "%.2f", st->max / st->min);
		else
			snprintf(ratio, sizeof ratio, "-");
		fprintf(out, "%8s %8u  %-24s  %s\n", ratio, st->count, who, x->name);
	}
}

int cp_report_print_summary(const char *dir, FILE *out, int top_n)
{
	struct cp_profile p;
	int rc = cp_profile_load(&p, dir, CP_REPORT_ALL_THREADS, 0, NULL, 0, NULL, 0);
	if (rc) {
		cp_profile_release(&p);
		return rc;
	}
	struct cp_report_options o;
	cp_report_options_init(&o);
	o.threshold = 5;
	struct cp_render r;
	memset(&r, 0, sizeof r);
	r.view = &p.td;
	r.sum = &p.sum;
	r.opt = &o;
	r.view_name = "top-down";
	r.threshold = o.threshold;
	r.ncols = 1;
	rc = p.sum.nmetrics ? cp_render_select(&r) : cp_error(CP_ENOENT, "%s holds no metric", dir);
	if (!rc) {
		cp_render_fold_chain(&r);
		if (top_n > 0)
			cp_render_truncate(&r, (size_t)top_n + 1);
		cp_render_text(&r, out);
		print_hot_procedures(&p, out, top_n > 0 ? (size_t)top_n / 2 : 5);
		if (p.sum.nranks > 1) /* the ranks' imbalance, not that of their threads */
			cp_report_print_mpi_job(&p, &r, dir, out,
						top_n > 0 ? (size_t)top_n / 2 : 5);
		else
			print_imbalance(&p, &r, out, top_n > 0 ? (size_t)top_n / 2 : 5);
		cp_report_print_omp(&p, out, top_n > 0 ? (size_t)top_n / 2 : 5);
		if (cp_db_metric_find(&p.db, "wait-time") != CP_DB_NONE)
			cp_report_print_sync_top(dir, out, 3);
		fprintf(out, "(more: callpath report %s --view top-down|bottom-up|flat)\n", dir);
		if (p.sum.nranks > 1)
			fprintf(out, "(one MPI rank: callpath report %s --rank 0..%zu)\n", dir,
				p.sum.nranks - 1);
	}
	cp_render_release(&r);
	cp_profile_release(&p);
	return rc;
}
