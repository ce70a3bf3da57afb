/* Text rendering: the summary header and the tree with inclusive/exclusive columns. */
#include "report/render.h"

#include "base/strbuf.h"
#include "base/xalloc.h"

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
	case CP_MF_MECH_PERF_TASK_CLOCK: return "perf_event task-clock";
	case CP_MF_MECH_POSIX_TIMER: return "POSIX timer";
	case CP_MF_MECH_ITIMER: return "setitimer";
	case CP_MF_MECH_PERF_EVENT: return "perf_event";
	case CP_MF_MECH_INTERPOSE: return "interposition";
	default: return "unknown mechanism";
	}
}

double cp_render_pct(const struct cp_render *r, uint32_t node, size_t metric, int inclusive)
{
	uint64_t total = cp_view_incl(r->view, 0)[metric];
	const uint64_t *v = inclusive ? cp_view_incl(r->view, node) : cp_view_excl(r->view, node);
	return total ? 100.0 * (double)v[metric] / (double)total : 0.0;
}

double cp_summary_rate(const struct cp_summary *s, size_t metric)
{
	if (s->metrics[metric].source != CP_MF_SRC_CPUTIME || !s->cpu_ns || s->threads_without_cpu)
		return -1;
	return (double)s->metrics[metric].samples / ((double)s->cpu_ns / 1e9);
}

double cp_summary_complete_pct(const struct cp_summary *s)
{
	uint64_t all = s->unwind_complete + s->unwind_partial + s->unwind_failed;
	return all ? 100.0 * (double)s->unwind_complete / (double)all : 100.0;
}

static void summary_metric(const struct cp_summary *s, size_t m, FILE *out)
{
	const struct cp_metric_desc *md = &s->metrics[m];
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

/* The runtime's notes, each text once with the number of processes that gave it. */
static void summary_notes(const struct cp_summary *s, FILE *out)
{
	enum { MAX_SHOWN = 8 };
	size_t shown = 0, hidden = 0;
	for (size_t i = 0; i < s->nnotes; i++) {
		const char *body = note_body(s->notes[i]);
		size_t first = 0, count = 0;
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
		fprintf(out, "note: ... and %zu more (callpath report --format json lists them all)\n",
			hidden);
}

void cp_render_summary_text(const struct cp_summary *s, FILE *out)
{
	fprintf(out, "measurement: %s\n", s->dir);
	fprintf(out, "command:     %s\n", s->command);
	fprintf(out, "processes:   %zu", s->nprocs);
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
	for (size_t m = 0; m < s->nmetrics; m++)
		summary_metric(s, m, out);
	fprintf(out, "unwind:      %.2f%% complete (%llu complete, %llu partial, %llu failed)",
		cp_summary_complete_pct(s), (unsigned long long)s->unwind_complete,
		(unsigned long long)s->unwind_partial, (unsigned long long)s->unwind_failed);
	uint64_t all = s->unwind_complete + s->unwind_partial + s->unwind_failed;
	if (all)
		fprintf(out, ", %.1f frames per sample", (double)s->frames / (double)all);
	fputc('\n', out);
	summary_notes(s, out);
	for (size_t i = 0; i < s->nwarnings; i++)
		fprintf(out, "warning: %s\n", s->warnings[i]);
}

static void value_text(const struct cp_render *r, uint64_t v, char *buf, size_t len)
{
	const char *unit = r->sum->metrics[r->metric].unit;
	if (!strcmp(unit, "ns"))
		snprintf(buf, len, "%.3fs", (double)v / 1e9);
	else
		snprintf(buf, len, "%llu", (unsigned long long)v);
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
	char incl[32];
	value_text(r, cp_view_incl(r->view, row->node)[r->metric], incl, sizeof incl);
	struct strbuf sb;
	strbuf_init(&sb);
	guides(r, i, open_levels, &sb);
	strbuf_addstr(&sb, n->name);
	if (n->kind == CP_VK_INLINED)
		strbuf_addstr(&sb, " [inlined]");
	if (n->file && n->kind != CP_VK_LINE && n->kind != CP_VK_FILE) {
		strbuf_addf(&sb, "  %s", cp_render_short(n->file));
		if (n->line > 0)
			strbuf_addf(&sb, ":%d", n->line);
	}
	if (n->module && n->kind != CP_VK_MODULE && n->kind != CP_VK_FILE && n->kind != CP_VK_LINE)
		strbuf_addf(&sb, "  (%s)", cp_render_short(n->module));
	fprintf(out, "%6.2f%% %10s %6.2f%%  %s\n", cp_render_pct(r, row->node, r->metric, 1), incl,
		cp_render_pct(r, row->node, r->metric, 0), sb.buf);
	strbuf_release(&sb);
}

void cp_render_text(const struct cp_render *r, FILE *out)
{
	const struct cp_metric_desc *md = &r->sum->metrics[r->metric];
	if (r->opt->summary) {
		cp_render_summary_text(r->sum, out);
		fputc('\n', out);
	}
	fprintf(out, "%s view, metric %s, sorted by %s", r->view_name, md->name,
		r->opt->sort == CP_SORT_NAME ? "name"
		: r->opt->sort == CP_SORT_EXCLUSIVE ? "exclusive" : "inclusive");
	if (r->threshold > 0)
		fprintf(out, ", hiding < %g%%", r->threshold);
	if (r->opt->depth > 0)
		fprintf(out, ", depth <= %d", r->opt->depth);
	if (r->opt->focus)
		fprintf(out, ", focus %s", r->opt->focus);
	if (r->via)
		fprintf(out, "\nall below runs in: %s", r->via);
	fprintf(out, "\n%7s %10s %7s  %s\n", "incl%", !strcmp(md->unit, "ns") ? "incl" : md->unit,
		"excl%", "scope  [call site / line]  (module)");
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
