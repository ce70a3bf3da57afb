/* Entry points of callpath report: load a profile, derive the chosen view, render it. */
#include "report/report.h"

#include "base/error.h"
#include "base/xalloc.h"
#include "report/profile.h"
#include "report/render.h"

#include <stdlib.h>
#include <string.h>

void cp_report_options_init(struct cp_report_options *o)
{
	memset(o, 0, sizeof *o);
	o->threshold = -1;
	o->thread = CP_REPORT_ALL_THREADS;
	o->summary = 1;
}

static const char *view_name(enum cp_report_view_kind k)
{
	return k == CP_VIEW_BOTTOM_UP ? "bottom-up" : k == CP_VIEW_FLAT ? "flat" : "top-down";
}

static int metric_index(const struct cp_summary *s, const char *name, size_t *out)
{
	*out = 0;
	if (!name)
		return 0;
	for (size_t m = 0; m < s->nmetrics; m++)
		if (!strcmp(s->metrics[m].name, name)) {
			*out = m;
			return 0;
		}
	char list[512] = "";
	for (size_t m = 0; m < s->nmetrics; m++) {
		if (m)
			strncat(list, ", ", sizeof list - strlen(list) - 1);
		strncat(list, s->metrics[m].name, sizeof list - strlen(list) - 1);
	}
	return cp_error(CP_ENOENT, "--metric %s: no such metric in %s (it has: %s)", name, s->dir,
			list);
}

static double threshold_of(const struct cp_report_options *o)
{
	return o->threshold >= 0 ? o->threshold : o->format == CP_FORMAT_TEXT ? 1.0 : 0.0;
}

/* Renders view v of profile p with options o. */
static int render(const struct cp_profile *p, const struct cp_view *v,
		  const struct cp_report_options *o, size_t metric, FILE *out)
{
	struct cp_render r;
	memset(&r, 0, sizeof r);
	r.view = v;
	r.sum = &p->sum;
	r.opt = o;
	r.view_name = view_name(o->view);
	r.threshold = threshold_of(o);
	r.metric = metric;
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
	return rc;
}

int cp_report_profile(const struct cp_profile *p, const struct cp_report_options *o, FILE *out)
{
	size_t metric;
	int rc = metric_index(&p->sum, o->metric, &metric);
	if (rc)
		return rc;
	if (o->view == CP_VIEW_TOP_DOWN)
		return render(p, &p->td, o, metric, out);
	struct cp_view v;
	struct cp_view_limits lim = {
		metric, cp_render_min_incl(cp_view_incl(&p->td, 0)[metric], threshold_of(o)),
		o->depth};
	if (o->view == CP_VIEW_BOTTOM_UP)
		cp_view_bottom_up(&p->td, &v, &lim);
	else
		cp_view_flat(&p->td, &v);
	rc = render(p, &v, o, metric, out);
	cp_view_release(&v);
	return rc;
}

int cp_report_run(const char *dir, const struct cp_report_options *o, FILE *out)
{
	struct cp_profile p;
	int rc = cp_profile_load(&p, dir, o->thread, o->thread_pid);
	if (rc)
		return rc;
	rc = cp_report_profile(&p, o, out);
	cp_profile_release(&p);
	return rc;
}

static const struct cp_view *hot_view;

static int excl_desc(const void *a, const void *b)
{
	uint64_t x = cp_view_excl(hot_view, *(const uint32_t *)a)[0];
	uint64_t y = cp_view_excl(hot_view, *(const uint32_t *)b)[0];
	return x > y ? -1 : x < y;
}

/* The procedures with the most exclusive cost (first metric), from the bottom-up view. */
static void print_hot_procedures(const struct cp_profile *p, FILE *out, size_t n)
{
	struct cp_view bu;
	struct cp_view_limits lim = {0, UINT64_MAX, 1}; /* procedures only, no callers */
	cp_view_bottom_up(&p->td, &bu, &lim);
	uint32_t *procs = xmalloc((bu.n + 1) * sizeof(*procs));
	size_t k = 0;
	for (uint32_t c = bu.nodes[0].first_child; c != UINT32_MAX; c = bu.nodes[c].next_sibling)
		procs[k++] = c;
	hot_view = &bu;
	qsort(procs, k, sizeof(*procs), excl_desc);
	uint64_t total = cp_view_incl(&p->td, 0)[0];
	fprintf(out, "\nhottest procedures (%s):\n%7s %7s  %s\n", p->sum.metrics[0].name, "excl%",
		"incl%", "procedure  (module)");
	for (size_t i = 0; i < k && i < n && total; i++) {
		const struct cp_vnode *x = &bu.nodes[procs[i]];
		uint64_t e = cp_view_excl(&bu, procs[i])[0];
		if (!e)
			break;
		fprintf(out, "%6.2f%% %6.2f%%  %s  (%s)\n", 100.0 * (double)e / (double)total,
			100.0 * (double)cp_view_incl(&bu, procs[i])[0] / (double)total, x->name,
			x->module ? cp_render_short(x->module) : "?");
	}
	free(procs);
	cp_view_release(&bu);
}

int cp_report_print_summary(const char *dir, FILE *out, int top_n)
{
	struct cp_profile p;
	int rc = cp_profile_load(&p, dir, CP_REPORT_ALL_THREADS, 0);
	if (rc)
		return rc;
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
	rc = cp_render_select(&r);
	if (!rc) {
		cp_render_fold_chain(&r);
		if (top_n > 0)
			cp_render_truncate(&r, (size_t)top_n + 1);
		cp_render_text(&r, out);
		print_hot_procedures(&p, out, top_n > 0 ? (size_t)top_n / 2 : 5);
		fprintf(out, "(more: callpath report %s --view top-down|bottom-up|flat)\n", dir);
	}
	cp_render_release(&r);
	cp_profile_release(&p);
	return rc;
}
