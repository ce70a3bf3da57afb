/* Text rendering: the summary header and the tree with inclusive/exclusive columns. */
#include "report/render.h"

#include "base/strbuf.h"
#include "base/xalloc.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *cp_render_short(const char *path)
{
	if (!path)
		return NULL;
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

const char *cp_mechanism_name(uint32_t mechanism)
{
	switch (mechanism) {
	case CP_MF_MECH_PERF_TASK_CLOCK:
		return "perf_event task-clock";
	case CP_MF_MECH_POSIX_TIMER:
		return "POSIX timer";
	case CP_MF_MECH_ITIMER:
		return "setitimer";
	case CP_MF_MECH_PERF_EVENT:
		return "perf_event";
	case CP_MF_MECH_INTERPOSE:
		return "interposition";
	default:
		return "unknown mechanism";
	}
}

const char *cp_render_enclosing(const struct cp_view *v, uint32_t node)
{
	const struct cp_vnode *n = &v->nodes[node];
	if (n->kind != CP_VK_LOOP && n->kind != CP_VK_LINE)
		return NULL;
	uint32_t a = n->parent;
	while (a != UINT32_MAX && v->nodes[a].kind != CP_VK_PROCEDURE)
		a = v->nodes[a].parent;
	return a != UINT32_MAX ? v->nodes[a].name : NULL;
}

double cp_render_pct(const struct cp_render *r, uint32_t node, size_t metric, int inclusive)
{
	size_t base = r->hooks && r->hooks->pct_of ? r->hooks->pct_of[metric] : metric;
	if (base == SIZE_MAX)
		return NAN;
	double total = cp_view_incl(r->view, 0)[base];
	const double *v = inclusive ? cp_view_incl(r->view, node) : cp_view_excl(r->view, node);
	if (isnan(v[metric]))
		return NAN;
	return total != 0 && !isnan(total) ? 100.0 * v[metric] / total : 0.0;
}

double cp_summary_rate(const struct cp_summary *s, size_t metric)
{
	if (metric >= s->nraw || s->metrics[metric].source != CP_MF_SRC_CPUTIME || !s->cpu_ns ||
	    s->threads_without_cpu)
		return -1;
	return (double)s->metrics[metric].samples / ((double)s->cpu_ns / 1e9);
}

double cp_summary_complete_pct(const struct cp_summary *s)
{
	uint64_t all = s->unwind_complete + s->unwind_partial + s->unwind_failed;
	return all ? 100.0 * (double)s->unwind_complete / (double)all : 100.0;
}

/* Entry/exit probes count and time every call: no samples, no unwinds to speak of. */
static void summary_probe_metric(const struct cp_metric_desc *md, FILE *out)
{
	fprintf(out, "metric %s (%s): ", md->name, md->unit);
	if (!strcmp(md->unit, "ns") && md->total < 1e6)
		fprintf(out, "%.1f us in the probed functions", md->total / 1e3);
	else if (!strcmp(md->unit, "ns") && md->total < 1e9)
		fprintf(out, "%.3f ms in the probed functions", md->total / 1e6);
	else if (!strcmp(md->unit, "ns"))
		fprintf(out, "%.3f s in the probed functions", md->total / 1e9);
	else
		fprintf(out, "%.0f %s", md->total, md->unit);
	fprintf(out, ", %zu function%s called [entry/exit probes]\n", md->nprocs,
		md->nprocs == 1 ? "" : "s");
}

static void summary_metric(const struct cp_summary *s, size_t m, FILE *out)
{
	const struct cp_metric_desc *md = &s->metrics[m];
	if (md->formula) {
		fprintf(out, "metric %s = %s (derived)\n", md->name, md->formula);
		return;
	}
	if (md->source == CP_MF_SRC_PROBE) {
		summary_probe_metric(md, out);
		return;
	}
	fprintf(out, "metric %s (%s): %llu samples", md->name, md->unit,
		(unsigned long long)md->samples);
	if (md->period && !strcmp(md->unit, "ns"))
		fprintf(out, ", asked %.0f/s", 1e9 / (double)md->period);
	double rate = cp_summary_rate(s, m);
	if (rate >= 0)
		fprintf(out, ", delivered %.0f per CPU second", rate);
	else if (md->source == CP_MF_SRC_CPUTIME)
		fprintf(out, ", delivered rate unknown (thread CPU time not recorded)");
	fprintf(out, " [%s]\n", cp_mechanism_name(md->mechanism));
}

/* A note without its "process N: " prefix. */
static const char *note_body(const char *note)
{
	int n = 0;
	if (sscanf(note, "process %*d: %n", &n) >= 0 && n > 0)
		return note + n;
	return note;
}

/* The probe module's count of probed and refused functions (runtime/probe/install.c),
 * shown as the "probes:" line rather than as a note. */
static int is_probes_note(const char *note)
{
	return !strncmp(note_body(note), "probes: ", 8);
}

static void summary_probes(const struct cp_summary *s, FILE *out)
{
	for (size_t i = 0; i < s->nnotes; i++)
		if (is_probes_note(s->notes[i])) {
			fprintf(out, "probes:      %s\n", note_body(s->notes[i]) + 8);
			return;
		}
}

/* The runtime's notes, each text once with the number of processes that gave it. */
static void summary_notes(const struct cp_summary *s, FILE *out)
{
	enum { MAX_SHOWN = 8 };
	size_t shown = 0, hidden = 0;
	for (size_t i = 0; i < s->nnotes; i++) {
		const char *body = note_body(s->notes[i]);
		size_t first = 0, count = 0;
		if (is_probes_note(s->notes[i]))
			continue;
		while (first < i && strcmp(note_body(s->notes[first]), body))
			first++;
		if (first < i)
			continue;
		for (size_t j = i; j < s->nnotes; j++)
			count += !strcmp(note_body(s->notes[j]), body);
		if (shown == MAX_SHOWN) {
			hidden++;
			continue;
		}
		shown++;
		if (count > 1)
			fprintf(out, "note: %s (%zu processes)\n", body, count);
		else
			fprintf(out, "note: %s\n", s->notes[i]);
	}
	if (hidden)
		fprintf(out,
			"note: ... and %zu more (callpath report --format json lists them all)\n",
			hidden);
}

/* Nothing sampled (probes only): no unwind statistics to give. */
static void summary_unwind(const struct cp_summary *s, FILE *out)
{
	uint64_t all = s->unwind_complete + s->unwind_partial + s->unwind_failed;
	int sampled = 0;
	for (size_t m = 0; m < s->nraw; m++)
		sampled |= s->metrics[m].source != CP_MF_SRC_PROBE;
	if (!all && !sampled)
		return;
	fprintf(out, "unwind:      %.2f%% complete (%llu complete, %llu partial, %llu failed)",
		cp_summary_complete_pct(s), (unsigned long long)s->unwind_complete,
		(unsigned long long)s->unwind_partial, (unsigned long long)s->unwind_failed);
	if (all)
		fprintf(out, ", %.1f frames per sample", (double)s->frames / (double)all);
	fputc('\n', out);
}

/* How much of the processes' CPU time the cputime samples saw: what was not sampled is
 * the runtime's own work (files, modules) and, when unknown, killed images. */
static void summary_coverage(const struct cp_summary *s, FILE *out)
{
	size_t m = 0;
	while (m < s->nraw && s->metrics[m].source != CP_MF_SRC_CPUTIME)
		m++;
	if (m == s->nraw || !s->process_cpu_ns || s->nthreads != s->nthreads_total)
		return;
	double cpu = (double)s->process_cpu_ns / 1e9, start = (double)s->startup_ns / 1e9;
	double rt = (double)s->runtime_ns / 1e9;
	/* The start-up charge is in the samples (as whole periods at the loader's entry). */
	double sampled = (double)s->metrics[m].samples * (double)s->metrics[m].period / 1e9;
	sampled = sampled > start ? sampled - start : 0;
	double rest = cpu - start - rt - sampled;
	fprintf(out,
		"process CPU: %.3f s: sampled %.0f%%, start-up before the runtime %.0f%% (charged "
		"to the loader), the runtime's own start and end %.0f%% (not charged), %s %.0f%%",
		cpu, 100 * sampled / cpu, 100 * start / cpu, 100 * rt / cpu,
		rest < 0 ? "sampling error" : "not sampled", 100 * rest / cpu);
	if (s->images_cpu_unknown)
		fprintf(out, "; %llu image(s) killed, not counted",
			(unsigned long long)s->images_cpu_unknown);
	fputc('\n', out);
}

void cp_render_summary_text(const struct cp_summary *s, FILE *out)
{
	fprintf(out, "measurement: %s\n", s->dir);
	fprintf(out, "command:     %s\n", s->command);
	fprintf(out, "processes:   %zu", s->nprocs);
	if (s->nranks)
		fprintf(out, " (%zu MPI rank%s)", s->nranks, s->nranks == 1 ? "" : "s");
	if (s->nforked || s->nexeced)
		fprintf(out, " (%zu fork children, %zu exec'd images)", s->nforked, s->nexeced);
	fprintf(out, "   threads: %zu", s->nthreads);
	if (s->nthreads != s->nthreads_total)
		fprintf(out, " (of %zu)", s->nthreads_total);
	if (s->host && s->host[0])
		fprintf(out, "   host: %s", s->host);
	if (s->duration_s > 0)
		fprintf(out, "   duration: %.2f s", s->duration_s);
	fputc('\n', out);
	summary_probes(s, out);
	for (size_t m = 0; m < s->nmetrics; m++)
		summary_metric(s, m, out);
	summary_coverage(s, out);
	summary_unwind(s, out);
	summary_notes(s, out);
	for (size_t i = 0; i < s->nwarnings; i++)
		fprintf(out, "warning: %s\n", s->warnings[i]);
	if (s->job_text)
		fputs(s->job_text, out);
}

/* A value in the unit of metric m: seconds for ns, integers for counts, 4 significant
 * digits for fractional (derived) values; empty for no value (NaN). */
void cp_render_value_text(const struct cp_render *r, size_t m, double v, char *buf, size_t len)
{
	const char *unit = r->sum->metrics[m].unit;
	if (isnan(v))
		snprintf(buf, len, "%s", "");
	else if (!strcmp(unit, "ns"))
		snprintf(buf, len, "%.3fs", v / 1e9);
	else if (v == floor(v) && fabs(v) < 1e15)
		snprintf(buf, len, "%.0f", v);
	else
		snprintf(buf, len, "%.4g", v);
}

static void pct_text(double pct, char *buf, size_t len)
{
	if (isnan(pct))
		snprintf(buf, len, "%s", "");
	else
		snprintf(buf, len, "%.2f%%", pct);
}

/* Tree guides of a row: one column per ancestor level, then the branch. */
static void guides(const struct cp_render *r, size_t i, const char *open_levels, struct strbuf *sb)
{
	const struct cp_row *row = &r->rows.rows[i];
	int ascii = r->opt->ascii;
	for (int d = 1; d < row->depth; d++)
		strbuf_addstr(sb, open_levels[d] ? (ascii ? "|  " : "\u2502  ") : "   ");
	if (row->depth > 0)
		strbuf_addstr(sb, row->last ? (ascii ? "`- " : "\u2514\u2500 ")
					    : (ascii ? "|- " : "\u251c\u2500 "));
}

static void row_text(const struct cp_render *r, size_t i, const char *open_levels, FILE *out)
{
	const struct cp_row *row = &r->rows.rows[i];
	const struct cp_vnode *n = &r->view->nodes[row->node];
	if (r->hooks && r->hooks->text_cells)
		r->hooks->text_cells(r, row->node, out);
	for (size_t c = 0; c < r->ncols && !(r->hooks && r->hooks->text_cells); c++) {
		size_t m = r->cols[c];
		char iv[32], ev[32], ip[16], ep[16];
		cp_render_value_text(r, m, cp_view_incl(r->view, row->node)[m], iv, sizeof iv);
		cp_render_value_text(r, m, cp_view_excl(r->view, row->node)[m], ev, sizeof ev);
		pct_text(cp_render_pct(r, row->node, m, 1), ip, sizeof ip);
		pct_text(cp_render_pct(r, row->node, m, 0), ep, sizeof ep);
		fprintf(out, "%7s %10s %7s %10s  ", ip, iv, ep, ev);
	}
	struct strbuf sb;
	strbuf_init(&sb);
	guides(r, i, open_levels, &sb);
	strbuf_addstr(&sb, n->name);
	if (n->kind == CP_VK_INLINED)
		strbuf_addstr(&sb, " [inlined]");
	if (n->file && n->kind != CP_VK_LINE && n->kind != CP_VK_FILE && n->kind != CP_VK_LOOP) {
		strbuf_addf(&sb, "  %s", cp_render_short(n->file));
		if (n->line > 0)
			strbuf_addf(&sb, ":%d", n->line);
	}
	if (n->module && (n->kind == CP_VK_PROCEDURE || n->kind == CP_VK_CALLER))
		strbuf_addf(&sb, "  (%s)", cp_render_short(n->module));
	/* a loop or statement lifted out of its procedure (--flatten, --focus): name it */
	const char *in = cp_render_enclosing(r->view, row->node);
	if (in && row->parent != n->parent)
		strbuf_addf(&sb, "  in %s", in);
	if (r->hot && r->hot[row->node] && row->node != 0)
		strbuf_addstr(&sb, "  <- hot");
	fprintf(out, "%s\n", sb.buf);
	strbuf_release(&sb);
}

static const char *sort_name(const struct cp_report_options *o)
{
	return o->sort == CP_SORT_NAME	      ? "name"
	       : o->sort == CP_SORT_EXCLUSIVE ? "exclusive"
					      : "inclusive";
}

/* The inclusive and exclusive columns' header of each shown metric. */
static void metric_header(const struct cp_render *r, FILE *out)
{
	const struct cp_summary *sum = r->sum;
	if (r->ncols > 1) {
		for (size_t c = 0; c < r->ncols; c++)
			fprintf(out, "%-38.38s  ", sum->metrics[r->cols[c]].name);
		fputc('\n', out);
	}
	for (size_t c = 0; c < r->ncols; c++) {
		const char *unit = sum->metrics[r->cols[c]].unit;
		int ns = !strcmp(unit, "ns") || !unit[0];
		char ih[24], eh[24];
		snprintf(ih, sizeof ih, "%s", ns ? "incl" : unit);
		snprintf(eh, sizeof eh, "%s", ns ? "excl" : unit);
		fprintf(out, "%7s %10s %7s %10s  ", "incl%", ih, "excl%", eh);
	}
}

void cp_render_text(const struct cp_render *r, FILE *out)
{
	const struct cp_summary *sum = r->sum;
	if (r->opt->summary) {
		cp_render_summary_text(sum, out);
		fputc('\n', out);
	}
	fprintf(out, "%s view, metric", r->view_name);
	for (size_t c = 0; c < r->ncols; c++)
		fprintf(out, "%s%s", c ? "," : " ", sum->metrics[r->cols[c]].name);
	if (r->opt->stat != CP_DB_STAT_SUM && r->opt->stat_over_ranks)
		fprintf(out, " (%s over %zu ranks)", cp_db_stat_name(r->opt->stat), sum->nranks);
	else if (r->opt->stat != CP_DB_STAT_SUM)
		fprintf(out, " (%s over %zu threads)", cp_db_stat_name(r->opt->stat),
			sum->nthreads);
	fprintf(out, ", sorted by %s", sort_name(r->opt));
	if (r->opt->sort != CP_SORT_NAME && (r->ncols > 1 || r->sort_metric != r->cols[0]))
		fprintf(out, " %s", sum->metrics[r->sort_metric].name);
	if (r->threshold > 0)
		fprintf(out, ", hiding < %g%%", r->threshold);
	if (r->opt->depth > 0)
		fprintf(out, ", depth <= %d", r->opt->depth);
	if (r->opt->focus)
		fprintf(out, ", focus %s", r->opt->focus);
	if (r->opt->flatten > 0)
		fprintf(out, ", flattened %d", r->opt->flatten);
	if (r->opt->hot_path >= 0)
		fprintf(out, ", hot path >= %g%%", r->opt->hot_path);
	if (r->via)
		fprintf(out, "\nall below runs in: %s", r->via);
	fputc('\n', out);
	if (r->hooks && r->hooks->text_header)
		r->hooks->text_header(r, out);
	else
		metric_header(r, out);
	fprintf(out, "%s\n", "scope  [call site / line]  (module)");
	char *open_levels = xcalloc(1, 1);
	size_t open_len = 1;
	for (size_t i = 0; i < r->rows.n; i++) {
		const struct cp_row *row = &r->rows.rows[i];
		if ((size_t)row->depth + 2 > open_len) {
			open_levels = xrealloc(open_levels, (size_t)row->depth + 2);
			memset(open_levels + open_len, 0, (size_t)row->depth + 2 - open_len);
			open_len = (size_t)row->depth + 2;
		}
		row_text(r, i, open_levels, out);
		open_levels[row->depth] = !row->last;
	}
	free(open_levels);
}
