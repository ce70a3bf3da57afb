/* CSV and JSON rendering (documented in docs/report-json.md): every number of the text
 * view, for every metric (measured and derived). No value (NaN) is an empty CSV field and a
 * JSON null. */
#include "report/render.h"

#include "base/strbuf.h"

#include <math.h>
#include <string.h>

static void csv_field(FILE *out, const char *s)
{
	if (!s)
		return;
	if (!strpbrk(s, ",\"\n")) {
		fputs(s, out);
		return;
	}
	fputc('"', out);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', out);
		fputc(*s, out);
	}
	fputc('"', out);
}

/* A number with up to 17 significant digits (integers exactly), or `none` for NaN. */
static void num(FILE *out, double v, const char *none)
{
	if (isnan(v) || isinf(v))
		fputs(none, out);
	else if (v == floor(v) && fabs(v) < 9e15)
		fprintf(out, "%.0f", v);
	else
		fprintf(out, "%.10g", v);
}

static void pct(FILE *out, double v, const char *none)
{
	if (isnan(v) || isinf(v))
		fputs(none, out);
	else
		fprintf(out, "%.4f", v);
}

void cp_render_csv(const struct cp_render *r, FILE *out)
{
	const struct cp_summary *s = r->sum;
	fputs("id,parent,depth,kind,name,module,file,line,line_end,hot", out);
	for (size_t m = 0; m < s->nmetrics; m++) {
		fputc(',', out);
		for (int k = 0; k < 4; k++) {
			static const char *const suf[] = {"_inclusive", "_inclusive_pct",
							  "_exclusive", "_exclusive_pct"};
			struct strbuf sb;
			strbuf_init(&sb);
			strbuf_addf(&sb, "%s%s", s->metrics[m].name, suf[k]);
			if (k)
				fputc(',', out);
			csv_field(out, sb.buf);
			strbuf_release(&sb);
		}
	}
	fputc('\n', out);
	for (size_t i = 0; i < r->rows.n; i++) {
		const struct cp_row *row = &r->rows.rows[i];
		const struct cp_vnode *n = &r->view->nodes[row->node];
		fprintf(out, "%u,", row->node);
		if (row->parent != UINT32_MAX)
			fprintf(out, "%u", row->parent);
		fprintf(out, ",%d,%s,", row->depth, cp_vkind_name(n->kind));
		csv_field(out, n->name);
		fputc(',', out);
		csv_field(out, n->module);
		fputc(',', out);
		csv_field(out, n->file);
		fprintf(out, ",%d,%d,%d", n->line, n->line_end, r->hot ? r->hot[row->node] : 0);
		for (size_t m = 0; m < s->nmetrics; m++) {
			fputc(',', out);
			num(out, cp_view_incl(r->view, row->node)[m], "");
			fputc(',', out);
			pct(out, cp_render_pct(r, row->node, m, 1), "");
			fputc(',', out);
			num(out, cp_view_excl(r->view, row->node)[m], "");
			fputc(',', out);
			pct(out, cp_render_pct(r, row->node, m, 0), "");
		}
		fputc('\n', out);
	}
}

/* Length of the well-formed UTF-8 sequence at s, or 0. */
static size_t utf8_len(const unsigned char *s)
{
	size_t n = s[0] < 0x80		   ? 1
		   : (s[0] & 0xe0) == 0xc0 ? 2
		   : (s[0] & 0xf0) == 0xe0 ? 3
		   : (s[0] & 0xf8) == 0xf0 ? 4
					   : 0;
	if (n == 2 && s[0] < 0xc2)
		return 0; /* overlong */
	for (size_t i = 1; i < n; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	return n;
}

/* A JSON string; bytes that are not UTF-8 (paths are bytes) become U+FFFD. */
static void json_str(FILE *out, const char *s)
{
	if (!s) {
		fputs("null", out);
		return;
	}
	struct strbuf sb, clean;
	strbuf_init(&sb);
	strbuf_init(&clean);
	for (const unsigned char *p = (const unsigned char *)s; *p;) {
		size_t n = utf8_len(p);
		if (n)
			strbuf_add(&clean, p, n);
		else
			strbuf_addstr(&clean, "\xef\xbf\xbd");
		p += n ? n : 1;
	}
	strbuf_add_json(&sb, clean.buf);
	fprintf(out, "\"%s\"", sb.buf);
	strbuf_release(&sb);
	strbuf_release(&clean);
}

void cp_render_json_str(FILE *out, const char *s)
{
	json_str(out, s);
}

static void json_strings(FILE *out, const char *const *v, size_t n)
{
	fputc('[', out);
	for (size_t i = 0; i < n; i++) {
		if (i)
			fputc(',', out);
		json_str(out, v[i]);
	}
	fputc(']', out);
}

static void json_metrics(const struct cp_render *r, FILE *out)
{
	const struct cp_summary *s = r->sum;
	fputs("\"metrics\":[", out);
	for (size_t m = 0; m < s->nmetrics; m++) {
		const struct cp_metric_desc *md = &s->metrics[m];
		fprintf(out, "%s{\"name\":", m ? "," : "");
		json_str(out, md->name);
		fputs(",\"unit\":", out);
		json_str(out, md->unit);
		fprintf(out, ",\"kind\":\"%s\",\"formula\":", md->formula ? "derived" : "measured");
		json_str(out, md->formula);
		fprintf(out, ",\"period\":%llu,\"samples\":%llu,\"total\":",
			(unsigned long long)md->period, (unsigned long long)md->samples);
		num(out, cp_view_incl(r->view, 0)[m], "null");
		fputs(",\"mechanism\":", out);
		json_str(out, md->formula ? NULL : cp_mechanism_name(md->mechanism));
		double rate = cp_summary_rate(s, m);
		if (rate >= 0)
			fprintf(out, ",\"delivered_rate\":%.3f}", rate);
		else
			fputs(",\"delivered_rate\":null}", out);
	}
	fputs("],\n", out);
}

static void json_summary(const struct cp_summary *s, FILE *out)
{
	fputs("\"summary\":{\"directory\":", out);
	json_str(out, s->dir);
	fputs(",\"command\":", out);
	json_str(out, s->command);
	fputs(",\"host\":", out);
	json_str(out, s->host);
	fprintf(out,
		",\"processes\":%zu,\"fork_children\":%zu,\"exec_images\":%zu,"
		"\"threads\":%zu,\"threads_total\":%zu,\"duration_s\":%.6f,\"cpu_s\":%.6f,",
		s->nprocs, s->nforked, s->nexeced, s->nthreads, s->nthreads_total, s->duration_s,
		(double)s->cpu_ns / 1e9);
	fprintf(out, "\"process_cpu_s\":%.6f,\"startup_s\":%.6f,\"runtime_s\":%.6f,",
		(double)s->process_cpu_ns / 1e9, (double)s->startup_ns / 1e9,
		(double)s->runtime_ns / 1e9);
	fprintf(out,
		"\"unwind\":{\"complete\":%llu,\"partial\":%llu,\"failed\":%llu,"
		"\"complete_pct\":%.4f,\"frames\":%llu},\"dropped\":%llu,\"notes\":",
		(unsigned long long)s->unwind_complete, (unsigned long long)s->unwind_partial,
		(unsigned long long)s->unwind_failed, cp_summary_complete_pct(s),
		(unsigned long long)s->frames, (unsigned long long)s->dropped);
	json_strings(out, s->notes, s->nnotes);
	fputs(",\"warnings\":", out);
	json_strings(out, s->warnings, s->nwarnings);
	fputs("},\n", out);
}

static void json_values(const struct cp_render *r, uint32_t node, FILE *out)
{
	size_t nm = r->sum->nmetrics;
	const char *keys[] = {"inclusive", "exclusive", "inclusive_pct", "exclusive_pct"};
	for (int k = 0; k < 4; k++) {
		fprintf(out, ",\"%s\":[", keys[k]);
		for (size_t m = 0; m < nm; m++) {
			if (m)
				fputc(',', out);
			if (k < 2)
				num(out,
				    (k ? cp_view_excl(r->view, node)
				       : cp_view_incl(r->view, node))[m],
				    "null");
			else
				pct(out, cp_render_pct(r, node, m, k == 2), "null");
		}
		fputc(']', out);
	}
}

static void json_node(const struct cp_render *r, const struct cp_row *row, FILE *out)
{
	const struct cp_vnode *n = &r->view->nodes[row->node];
	fprintf(out, "{\"id\":%u,\"parent\":", row->node);
	if (row->parent == UINT32_MAX)
		fputs("null", out);
	else
		fprintf(out, "%u", row->parent);
	fprintf(out, ",\"depth\":%d,\"kind\":\"%s\",\"name\":", row->depth, cp_vkind_name(n->kind));
	json_str(out, n->name);
	fputs(",\"module\":", out);
	json_str(out, n->module);
	fputs(",\"file\":", out);
	json_str(out, n->file);
	fprintf(out, ",\"line\":%d", n->line);
	if (n->kind == CP_VK_LOOP)
		fprintf(out, ",\"line_end\":%d", n->line_end);
	const char *in = cp_render_enclosing(r->view, row->node);
	if (in) {
		fputs(",\"procedure\":", out);
		json_str(out, in);
	}
	if (r->hot)
		fprintf(out, ",\"hot\":%s", r->hot[row->node] ? "true" : "false");
	json_values(r, row->node, out);
	fputc('}', out);
}

void cp_render_json(const struct cp_render *r, FILE *out)
{
	const struct cp_report_options *o = r->opt;
	const struct cp_summary *s = r->sum;
	fputs("{\"version\":2,\n", out);
	json_metrics(r, out);
	json_summary(s, out);
	fprintf(out, "\"view\":\"%s\",\"metric\":", r->view_name);
	json_str(out, s->metrics[r->cols[0]].name);
	fputs(",\"shown\":[", out);
	for (size_t c = 0; c < r->ncols; c++) {
		if (c)
			fputc(',', out);
		json_str(out, s->metrics[r->cols[c]].name);
	}
	fprintf(out, "],\"stat\":\"%s\",\"sort\":\"%s\",\"sort_metric\":", cp_db_stat_name(o->stat),
		o->sort == CP_SORT_NAME	       ? "name"
		: o->sort == CP_SORT_EXCLUSIVE ? "exclusive"
					       : "inclusive");
	json_str(out, s->metrics[r->sort_metric].name);
	fprintf(out, ",\"threshold\":%g,\"depth\":%d,\"flatten\":%d,\"hot_path\":", r->threshold,
		o->depth, o->flatten);
	if (o->hot_path >= 0)
		fprintf(out, "%g", o->hot_path);
	else
		fputs("null", out);
	fputs(",\"focus\":", out);
	json_str(out, o->focus);
	fputs(",\n\"nodes\":[\n", out);
	for (size_t i = 0; i < r->rows.n; i++) {
		json_node(r, &r->rows.rows[i], out);
		fputs(i + 1 < r->rows.n ? ",\n" : "\n", out);
	}
	fputs("]}\n", out);
}
