/* callpath diff: the view of the difference of two profiles (diff.h). */
#include "report/diff.h"

#include "base/error.h"
#include "base/strbuf.h"
#include "base/xalloc.h"
#include "report/profile.h"
#include "report/render.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct diff {
	const char *path[2];
	struct cp_profile p[2];
	struct cp_intern pool;
	struct cp_view d; /* the merged view: CP_DIFF_NCOLS metrics per compared metric */
	size_t nm;	  /* compared metrics */
	size_t m[2][CP_REPORT_MAX_METRICS];	 /* their indices in A and B */
	double scale[CP_REPORT_MAX_METRICS];	 /* B's values are multiplied by it */
	double weight[2][CP_REPORT_MAX_METRICS]; /* value of one sample; 0 exact; NaN unknown */
	struct cp_summary sum;			 /* of the difference view's metrics */
	size_t *pct_of;
};

void cp_diff_options_init(struct cp_diff_options *o)
{
	memset(o, 0, sizeof *o);
	cp_report_options_init(&o->report);
	o->normalize = CP_DIFF_ABSOLUTE;
}

static size_t col(size_t k, enum cp_diff_col c)
{
	return k * CP_DIFF_NCOLS + c;
}

static size_t metric_find(const struct cp_summary *s, const char *name, size_t len)
{
	for (size_t m = 0; m < s->nmetrics; m++)
		if (strlen(s->metrics[m].name) == len && !memcmp(s->metrics[m].name, name, len))
			return m;
	return SIZE_MAX;
}

/* The value of one sample of metric m: exact metrics (probes) have no sampling noise,
 * derived ones an unknown noise. */
static double sample_weight(const struct cp_summary *s, size_t m)
{
	const struct cp_metric_desc *md = &s->metrics[m];
	if (md->formula || m >= s->nraw)
		return NAN;
	if (md->source == CP_MF_SRC_PROBE)
		return 0;
	return md->samples ? md->total / (double)md->samples : NAN;
}

/* The metrics of A that B has too, with B's scale and both sample weights. */
static int diff_metrics(struct diff *df, enum cp_diff_normalize norm)
{
	const struct cp_summary *sa = &df->p[0].sum, *sb = &df->p[1].sum;
	for (size_t m = 0; m < sa->nmetrics && df->nm < CP_REPORT_MAX_METRICS; m++) {
		const char *name = sa->metrics[m].name;
		size_t mb = metric_find(sb, name, strlen(name));
		if (mb == SIZE_MAX)
			continue;
		size_t k = df->nm++;
		df->m[0][k] = m;
		df->m[1][k] = mb;
		df->weight[0][k] = sample_weight(sa, m);
		df->weight[1][k] = sample_weight(sb, mb);
		double ta = cp_view_incl(&df->p[0].td, 0)[m],
		       tb = cp_view_incl(&df->p[1].td, 0)[mb];
		df->scale[k] = 1;
		if (norm == CP_DIFF_TOTAL && !sa->metrics[m].formula && tb > 0)
			df->scale[k] = ta / tb;
	}
	if (!df->nm)
		return cp_error(CP_ENOENT, "%s and %s have no metric in common", df->path[0],
				df->path[1]);
	return 0;
}

/* Names of modules and files without their directories: two builds compare. */
static const char *short_name(struct diff *df, const char *s)
{
	return s ? cp_intern(&df->pool, cp_render_short(s)) : NULL;
}

/* Adds view v of side (0 = A, 1 = B) to the merged view, matching its nodes by name. */
static void merge(struct diff *df, const struct cp_view *v, int side)
{
	uint32_t *map = xmalloc(v->n * sizeof(*map));
	map[0] = 0;
	for (uint32_t i = 0; i < v->n; i++) {
		const struct cp_vnode *n = &v->nodes[i];
		if (i) {
			int bare = n->kind == CP_VK_MODULE || n->kind == CP_VK_FILE;
			const char *name =
			    bare ? short_name(df, n->name) : cp_intern(&df->pool, n->name);
			map[i] = cp_view_child(&df->d, map[n->parent], n->kind, name,
					       short_name(df, n->module), short_name(df, n->file),
					       n->line);
			df->d.nodes[map[i]].line_end = n->line_end;
		}
		double *in = cp_view_incl(&df->d, map[i]), *ex = cp_view_excl(&df->d, map[i]);
		for (size_t k = 0; k < df->nm; k++) {
			double s = side ? df->scale[k] : 1;
			in[col(k, side)] += s * cp_view_incl(v, i)[df->m[side][k]];
			ex[col(k, side)] += s * cp_view_excl(v, i)[df->m[side][k]];
		}
	}
	free(map);
}

/* B - A, its noise and their ratio in the values x of one node (inclusive or exclusive):
 * a count of n samples has a Poisson standard deviation of sqrt(n), so a value a = w n has
 * a variance of w a; B's values are scaled by s, so their variance is s w b. */
static void delta(const struct diff *df, double *x)
{
	for (size_t k = 0; k < df->nm; k++) {
		double a = x[col(k, CP_DIFF_A)], b = x[col(k, CP_DIFF_B)];
		double d = b - a;
		double var = df->weight[0][k] * fabs(a) + df->scale[k] * df->weight[1][k] * fabs(b);
		double sd = sqrt(var), z;
		if (isnan(sd))
			z = NAN;
		else if (sd > 0)
			z = d / sd;
		else
			z = d > 0 ? INFINITY : d < 0 ? -INFINITY : 0;
		x[col(k, CP_DIFF_DELTA)] = d;
		x[col(k, CP_DIFF_NOISE)] = sd;
		x[col(k, CP_DIFF_Z)] = z;
	}
}

/* The difference view's metrics: NAME.a, NAME.b, NAME.delta, NAME.noise, NAME.z; the
 * percentages of the first four are of A's total. */
static void diff_summary(struct diff *df)
{
	static const char *const suffix[CP_DIFF_NCOLS] = {"a", "b", "delta", "noise", "z"};
	const struct cp_summary *sa = &df->p[0].sum;
	size_t n = df->nm * CP_DIFF_NCOLS;
	df->sum = *sa;
	df->sum.cpu_ns = 0; /* no delivered rate: the B columns' samples are not A's */
	df->sum.metrics = xcalloc(n + 1, sizeof(*df->sum.metrics));
	df->sum.nmetrics = df->sum.nraw = n;
	df->pct_of = xmalloc((n + 1) * sizeof(*df->pct_of));
	for (size_t k = 0; k < df->nm; k++)
		for (size_t c = 0; c < CP_DIFF_NCOLS; c++) {
			const struct cp_metric_desc *md = &sa->metrics[df->m[0][k]];
			struct cp_metric_desc *x = &df->sum.metrics[col(k, c)];
			char name[512];
			snprintf(name, sizeof name, "%s.%s", md->name, suffix[c]);
			*x = *md;
			x->name = cp_intern(&df->pool, name);
			x->unit = c == CP_DIFF_Z ? "" : md->unit;
			x->formula = NULL;
			x->total = cp_view_incl(&df->d, 0)[col(k, c)];
			if (c == CP_DIFF_B)
				x->samples = df->p[1].sum.metrics[df->m[1][k]].samples;
			df->pct_of[col(k, c)] = c == CP_DIFF_Z ? SIZE_MAX : col(k, CP_DIFF_A);
		}
}

static int load(struct diff *df, int side, const struct cp_diff_options *o,
		const char *const *specs, size_t nspecs)
{
	const struct cp_report_options *r = &o->report;
	int rc = cp_profile_load(&df->p[side], df->path[side], CP_REPORT_ALL_THREADS, 0, specs,
				 nspecs, r->progress, r->no_write);
	if (rc)
		return cp_error_prefix(rc, "%s (%s)", side ? "B" : "A", df->path[side]);
	return 0;
}

/* The chosen view of side's profile, in *v (top-down: the profile's own, not copied). */
static const struct cp_view *side_view(struct diff *df, int side, int kind, struct cp_view *v)
{
	if (kind == CP_VIEW_TOP_DOWN)
		return &df->p[side].td;
	cp_profile_view(&df->p[side], kind, CP_DB_STAT_SUM, NULL, v);
	return v;
}

static int diff_build(struct diff *df, const struct cp_diff_options *o)
{
	const char *specs[CP_REPORT_MAX_METRICS];
	size_t nspecs = 0;
	for (size_t i = 0; i < o->report.nmetrics; i++)
		if (strchr(o->report.metrics[i], '='))
			specs[nspecs++] = o->report.metrics[i];
	int rc;
	for (int side = 0; side < 2; side++)
		if ((rc = load(df, side, o, specs, nspecs)))
			return rc;
	if ((rc = diff_metrics(df, o->normalize)))
		return rc;
	int kind = o->folded ? CP_VIEW_TOP_DOWN : (int)o->report.view;
	cp_view_init(&df->d, df->nm * CP_DIFF_NCOLS, &df->pool);
	for (int side = 0; side < 2; side++) {
		struct cp_view tmp;
		const struct cp_view *v = side_view(df, side, kind, &tmp);
		merge(df, v, side);
		if (v == &tmp)
			cp_view_release(&tmp);
	}
	for (uint32_t i = 0; i < df->d.n; i++) {
		delta(df, cp_view_incl(&df->d, i));
		delta(df, cp_view_excl(&df->d, i));
	}
	diff_summary(df);
	return 0;
}

static void diff_release(struct diff *df)
{
	cp_profile_release(&df->p[0]);
	cp_profile_release(&df->p[1]);
	cp_view_release(&df->d);
	free(df->sum.metrics);
	free(df->pct_of);
	cp_intern_release(&df->pool);
}

/* ---- text ---- */

static int show_excl(const struct cp_render *r)
{
	return r->opt->sort == CP_SORT_EXCLUSIVE;
}

static void text_header(const struct cp_render *r, FILE *out)
{
	const struct diff *df = r->hooks->ctx;
	for (size_t c = 0; c < r->ncols; c++) {
		size_t m = df->m[0][r->cols[c] / CP_DIFF_NCOLS];
		fprintf(out, "%-66.66s  ", df->p[0].sum.metrics[m].name);
	}
	fputc('\n', out);
	for (size_t c = 0; c < r->ncols; c++)
		fprintf(out, "%10s %10s %11s %8s %10s %-6s  ", show_excl(r) ? "A excl" : "A incl",
			show_excl(r) ? "B excl" : "B incl", "B-A", "B-A %", "noise", "change");
}

static void text_cells(const struct cp_render *r, uint32_t node, FILE *out)
{
	const double *x = show_excl(r) ? cp_view_excl(r->view, node) : cp_view_incl(r->view, node);
	for (size_t c = 0; c < r->ncols; c++) {
		size_t a = r->cols[c] - CP_DIFF_DELTA;
		char va[32], vb[32], vd[32], vn[32], pct[16];
		cp_render_value_text(r, a, x[a + CP_DIFF_A], va, sizeof va);
		cp_render_value_text(r, a, x[a + CP_DIFF_B], vb, sizeof vb);
		double d = x[a + CP_DIFF_DELTA], z = x[a + CP_DIFF_Z];
		vd[0] = d > 0 ? '+' : 0;
		cp_render_value_text(r, a, d, vd + (d > 0), sizeof vd - 1);
		char *nv = vn;
		*nv++ = '+', *nv++ = '-';
		cp_render_value_text(r, a, x[a + CP_DIFF_NOISE], nv, sizeof vn - 2);
		double ta = cp_view_incl(r->view, 0)[a + CP_DIFF_A];
		if (ta != 0 && !isnan(d))
			snprintf(pct, sizeof pct, "%+.2f%%", 100.0 * d / ta);
		else
			pct[0] = 0;
		const char *change = isnan(z)		   ? "?"
				     : z > CP_DIFF_SIGMAS  ? "up"
				     : z < -CP_DIFF_SIGMAS ? "down"
							   : "-";
		fprintf(out, "%10s %10s %11s %8s %10s %-6s  ", va, vb, vd, pct, vn, change);
	}
}

static void text_intro(const struct diff *df, const struct cp_diff_options *o, FILE *out)
{
	for (int side = 0; side < 2; side++)
		fprintf(out, "%s: %s  (%s)\n", side ? "B" : "A", df->path[side],
			df->p[side].sum.command);
	for (size_t k = 0; k < df->nm; k++) {
		const struct cp_metric_desc *a = &df->p[0].sum.metrics[df->m[0][k]];
		const struct cp_metric_desc *b = &df->p[1].sum.metrics[df->m[1][k]];
		fprintf(out, "metric %s: A %llu samples, B %llu samples", a->name,
			(unsigned long long)a->samples, (unsigned long long)b->samples);
		if (o->normalize == CP_DIFF_TOTAL && df->scale[k] != 1)
			fprintf(out, ", B scaled by %.4g to A's total", df->scale[k]);
		fputc('\n', out);
	}
	fprintf(out,
		"change: up/down when |B-A| > %g x noise (one standard deviation of B-A from the "
		"sample counts, Poisson); B-A %% is of A's total\n\n",
		CP_DIFF_SIGMAS);
}

/* ---- differential folded stacks ---- */

static void put_frame(struct strbuf *sb, const char *s)
{
	for (; *s; s++)
		strbuf_addch(sb, *s == ';' ? ':' : *s == '\n' || *s == '\t' ? ' ' : *s);
}

/* The frames (procedures, inlined frames) from the root down to node, ';'-separated. */
static void frame_path(const struct cp_view *v, uint32_t node, struct strbuf *sb)
{
	uint32_t chain[4096];
	size_t n = 0;
	for (uint32_t x = node; x && x != UINT32_MAX && n < 4096; x = v->nodes[x].parent) {
		uint32_t k = v->nodes[x].kind;
		if (k == CP_VK_PROCEDURE || k == CP_VK_INLINED || k == CP_VK_PARTIAL)
			chain[n++] = x;
	}
	strbuf_clear(sb);
	if (!n)
		strbuf_addstr(sb, "[unknown]");
	while (n--) {
		put_frame(sb, v->nodes[chain[n]].name);
		if (n)
			strbuf_addch(sb, ';');
	}
}

/* One line "frame;frame;frame A B" per frame path with a cost in A or B (the input of
 * flamegraph.pl's differential flame graphs), values rounded to integers. */
static void write_folded(const struct diff *df, size_t k, FILE *out)
{
	const struct cp_view *v = &df->d;
	struct cp_intern paths;
	cp_intern_init(&paths);
	double *sum = NULL;
	size_t alloc = 0;
	struct strbuf sb;
	strbuf_init(&sb);
	for (uint32_t i = 1; i < v->n; i++) {
		/* A node's own cost: its inclusive less its children's. Mostly on the leaves, but a
		 * row matched across the runs may be a leaf in one run only: B's loader row under
		 * A's loader row with children lost B's start-up charge. */
		double x[2] = {cp_view_incl(v, i)[col(k, CP_DIFF_A)],
			       cp_view_incl(v, i)[col(k, CP_DIFF_B)]};
		for (uint32_t c = v->nodes[i].first_child; c != UINT32_MAX;
		     c = v->nodes[c].next_sibling) {
			x[0] -= cp_view_incl(v, c)[col(k, CP_DIFF_A)];
			x[1] -= cp_view_incl(v, c)[col(k, CP_DIFF_B)];
		}
		for (int j = 0; j < 2; j++)
			if (fabs(x[j]) < 0.5)
				x[j] = 0; /* rounding of summed children */
		if (x[0] == 0 && x[1] == 0)
			continue;
		frame_path(v, i, &sb);
		uint32_t id = cp_intern_id(&paths, sb.buf);
		if (2 * (size_t)id + 2 > alloc) {
			size_t old = alloc;
			XGROW(sum, 2 * (size_t)id + 2, alloc);
			memset(sum + old, 0, (alloc - old) * sizeof(*sum));
		}
		sum[2 * id] += x[0];
		sum[2 * id + 1] += x[1];
	}
	for (size_t id = 0; id < paths.count; id++) {
		long long a = llround(sum[2 * id]), b = llround(sum[2 * id + 1]);
		if (a || b)
			fprintf(out, "%s %lld %lld\n", paths.by_id[id], a, b);
	}
	strbuf_release(&sb);
	free(sum);
	cp_intern_release(&paths);
}

/* ---- options and rendering ---- */

/* The compared metric named by a --metric or --sort item. */
static int compared(const struct diff *df, const char *item, size_t *k)
{
	const char *eq = strchr(item, '=');
	size_t len = eq ? (size_t)(eq - item) : strlen(item);
	size_t m = metric_find(&df->p[0].sum, item, len);
	for (size_t i = 0; i < df->nm; i++)
		if (df->m[0][i] == m) {
			*k = i;
			return 0;
		}
	return cp_error(CP_ENOENT, "--metric %.*s: not a metric of both %s and %s", (int)len, item,
			df->path[0], df->path[1]);
}

static int render_columns(const struct diff *df, const struct cp_report_options *o,
			  struct cp_render *r)
{
	size_t k;
	int rc;
	for (size_t i = 0; i < o->nmetrics; i++) {
		if ((rc = compared(df, o->metrics[i], &k)))
			return rc;
		r->cols[r->ncols++] = col(k, CP_DIFF_DELTA);
	}
	if (!r->ncols)
		r->cols[r->ncols++] = col(0, CP_DIFF_DELTA);
	k = r->cols[0] / CP_DIFF_NCOLS;
	if (o->sort_metric && (rc = compared(df, o->sort_metric, &k)))
		return rc;
	r->sort_metric = col(k, CP_DIFF_DELTA);
	r->metric = col(k, CP_DIFF_A);
	return 0;
}

static int diff_render(struct diff *df, const struct cp_diff_options *o, FILE *out)
{
	struct cp_report_options ro = o->report;
	struct cp_render r;
	memset(&r, 0, sizeof r);
	int rc = render_columns(df, &ro, &r);
	if (rc)
		return rc;
	if (o->folded) {
		write_folded(df, r.sort_metric / CP_DIFF_NCOLS, out);
		return 0;
	}
	struct cp_render_hooks hooks = {df->pct_of, r.sort_metric - CP_DIFF_DELTA + CP_DIFF_B,
					text_header, text_cells, df};
	static const char *const names[] = {"top-down", "bottom-up", "flat"};
	if (ro.format == CP_FORMAT_TEXT && ro.summary)
		text_intro(df, o, out);
	ro.summary = 0;
	r.view = &df->d;
	r.sum = &df->sum;
	r.opt = &ro;
	r.view_name = names[ro.view <= CP_VIEW_FLAT ? ro.view : 0];
	r.threshold = ro.threshold >= 0 ? ro.threshold : ro.format == CP_FORMAT_TEXT ? 1.0 : 0.0;
	r.hooks = &hooks;
	rc = cp_render_select(&r);
	if (!rc && ro.format == CP_FORMAT_CSV)
		cp_render_csv(&r, out);
	else if (!rc && ro.format == CP_FORMAT_JSON)
		cp_render_json(&r, out);
	else if (!rc)
		cp_render_text(&r, out);
	cp_render_release(&r);
	return rc;
}

int cp_diff_run(const char *a, const char *b, const struct cp_diff_options *o, FILE *out)
{
	struct diff df;
	memset(&df, 0, sizeof df);
	cp_intern_init(&df.pool);
	df.path[0] = a;
	df.path[1] = b;
	int rc = diff_build(&df, o);
	if (!rc)
		rc = diff_render(&df, o, out);
	diff_release(&df);
	return rc;
}
