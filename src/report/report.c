/* Entry points of callpath report: load a profile, derive the chosen view, render it. */
#include "report/report.h"

#include "base/error.h"
#include "report/profile.h"
#include "report/render.h"

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
		if (top_n > 0 && r.rows.n > (size_t)top_n + 1)
			r.rows.n = (size_t)top_n + 1; /* pre-order: the hottest paths come first */
		cp_render_text(&r, out);
		fprintf(out, "(more: callpath report %s --view top-down|bottom-up|flat)\n", dir);
	}
	cp_render_release(&r);
	cp_profile_release(&p);
	return rc;
}
