/* The search's result as text, JSON and DOT (search.h; the JSON format is documented in
 * docs/cmd-search.md). */
#include "search/search.h"

#include "base/error.h"
#include "db/search-table.h"
#include "search/syncobj.h"

#include <stdlib.h>
#include <string.h>

static const char *const state_name[] = {"queued", "pending", "true", "false"};

void cp_search_focus_name(const struct cp_search *s, uint32_t i, char *buf, size_t cap)
{
	const struct cp_search_node *n = &s->graph.nodes[i];
	const struct cp_code_loop *l = n->kind == CP_FOCUS_LOOP ? &s->model.loops[n->target] : NULL;
	const struct cp_code_func *func = &s->model.funcs[l ? l->func : n->target];
	const char *path = s->model.modules[func->module].path;
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	const char *fn = func->name;
	const struct cp_search_info *in = i < s->info_alloc ? &s->info[i] : NULL;
	const struct cp_search_syncfocus *sf = cp_search_sync_focus(s, n->sync);
	size_t len;
	if (sf)
		snprintf(buf, cap, "%s", sf->name);
	else if (!l)
		snprintf(buf, cap, "/Code/%s/%s", base, fn);
	else if (in && in->file)
		snprintf(buf, cap, "/Code/%s/%s/loop@%s:%d", base, fn,
			 strrchr(in->file, '/') ? strrchr(in->file, '/') + 1 : in->file, in->line);
	else
		snprintf(buf, cap, "/Code/%s/%s/loop@0x%llx", base, fn,
			 (unsigned long long)l->header);
	len = strlen(buf);
	if (n->thread >= 0 && len < cap)
		snprintf(buf + len, cap - len, ",/Machine/%s/%d/%d", s->host, s->pid,
			 s->tids[n->thread]);
	else if (s->multi && len < cap)
		snprintf(buf + len, cap - len, ",/Machine/%s/%d", s->host, s->pid);
}

/* Is focus j one of the refinements of focus i (paper §5: a function's callees outside
 * loops and outermost loops; a loop's callees directly in it and directly nested loops)? */
static int refines(const struct cp_code_model *m, const struct cp_search_node *i,
		   const struct cp_search_node *j)
{
	uint32_t f = i->kind == CP_FOCUS_LOOP ? m->loops[i->target].func : i->target;
	int32_t level = i->kind == CP_FOCUS_LOOP ? (int32_t)i->target : -1;
	if (j->kind == CP_FOCUS_LOOP)
		return m->loops[j->target].func == f && m->loops[j->target].parent == level;
	return cp_code_model_calls_at(m, f, level, j->target);
}

/* Has true node i a true refinement: of the same hypothesis, or along the "why" axis at
 * the same focus (MemoryBound for CPUBound: page-fault handling is CPU time, the more
 * precise explanation of it)? */
static int has_true_child(const struct cp_search *s, uint32_t i)
{
	const struct cp_search_node *a = &s->graph.nodes[i];
	for (size_t j = 0; j < s->graph.n; j++) {
		const struct cp_search_node *b = &s->graph.nodes[j];
		if (j == i || b->state != CP_NODE_TRUE)
			continue;
		/* a thread's node is as precise as its code focus: not when that is refined */
		if (b->hyp == a->hyp &&
		    (b->parent == (int32_t)i || ((b->thread == a->thread || b->thread < 0) &&
						 b->sync == a->sync && refines(&s->model, a, b))))
			return 1;
		if (a->hyp == CP_HYP_CPU && b->hyp == CP_HYP_MEM && b->kind == a->kind &&
		    b->target == a->target && b->thread == a->thread && b->sync == a->sync)
			return 1;
	}
	return 0;
}

/* Rank classes: 0 the strongest most precise bottleneck of each hypothesis, 1 the other
 * leaves of the true subgraph (the most precise), 2 the rest. */
static const struct cp_search *sort_s;
static uint8_t *sort_class;
static int by_rank(const void *pa, const void *pb)
{
	uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
	if (sort_class[a] != sort_class[b])
		return sort_class[a] - sort_class[b];
	double va = sort_s->graph.nodes[a].value, vb = sort_s->graph.nodes[b].value;
	return va > vb ? -1 : va < vb ? 1 : (a > b) - (a < b);
}

/* Classes of the n true nodes all[]: leaves 1, others 2; then the best leaf of each
 * hypothesis 0 (different kinds of problem: each one's first before another's second). */
static void classify(const struct cp_search *s, const uint32_t *all, size_t n, uint8_t *cls)
{
	for (size_t k = 0; k < n; k++)
		cls[all[k]] = has_true_child(s, all[k]) ? 2 : 1;
	for (uint32_t h = 0; h < CP_HYP_N; h++) {
		long best = -1;
		for (size_t k = 0; k < n; k++) {
			const struct cp_search_node *x = &s->graph.nodes[all[k]];
			if (x->hyp == h && cls[all[k]] == 1 &&
			    (best < 0 || x->value > s->graph.nodes[best].value))
				best = (long)all[k];
		}
		if (best >= 0)
			cls[best] = 0;
	}
}

size_t cp_search_bottlenecks(const struct cp_search *s, uint32_t *out, size_t max)
{
	size_t n = 0;
	uint32_t *all = malloc((s->graph.n + 1) * sizeof *all);
	uint8_t *cls = calloc(s->graph.n + 1, 1);
	if (!all || !cls) {
		free(all);
		free(cls);
		return 0;
	}
	for (size_t i = 0; i < s->graph.n; i++)
		if (s->graph.nodes[i].state == CP_NODE_TRUE)
			all[n++] = (uint32_t)i;
	classify(s, all, n, cls);
	sort_s = s;
	sort_class = cls;
	qsort(all, n, sizeof *all, by_rank);
	free(cls);
	if (n > max)
		n = max;
	memcpy(out, all, n * sizeof *out);
	free(all);
	return n;
}

/* file:line, or without line information (a stripped program) MODULE+0xADDRESS, the
 * ELF address of the function's entry or the loop's header as `report` names it. */
static void print_where(const struct cp_search *s, uint32_t i, FILE *out)
{
	const struct cp_search_info *in = &s->info[i];
	const struct cp_search_node *n = &s->graph.nodes[i];
	const struct cp_code_loop *l = n->kind == CP_FOCUS_LOOP ? &s->model.loops[n->target] : NULL;
	const struct cp_code_func *f = &s->model.funcs[l ? l->func : n->target];
	const char *path = s->model.modules[f->module].path;
	if (in->file)
		fprintf(out, "%s:%d", in->file, in->line);
	else if (n->sync >= 0)
		fprintf(out, "?");
	else
		fprintf(out, "%s+0x%llx", strrchr(path, '/') ? strrchr(path, '/') + 1 : path,
			(unsigned long long)(l ? l->header : f->lo));
}

void cp_search_print_text(const struct cp_search *s, FILE *out)
{
	char name[512];
	uint32_t *b = malloc((s->graph.n + 1) * sizeof *b);
	size_t nb = b ? cp_search_bottlenecks(s, b, s->graph.n) : 0;
	fprintf(out,
		"callpath search: %zu experiments in %.1f s (%.2f/s), threshold %.0f%%, "
		"probe cost at most %.2f%% (limit %.0f%%)%s\n",
		s->experiments, s->elapsed,
		s->elapsed > 0 ? (double)s->experiments / s->elapsed : 0, 100 * s->o.threshold,
		100 * s->cost_max, 100 * s->o.cost_limit,
		s->program_exited   ? "; the program ended during the search (partial result)"
		: s->interrupted    ? "; interrupted (partial result)"
		: s->stopped_by_for ? "; stopped by --for (partial result)"
				    : "");
	if (s->command[0])
		fprintf(out, "Process %d (%s): %s\n", s->pid, s->command, s->reason);
	fprintf(out, "\nBottlenecks (most precise first):\n");
	if (!nb)
		fprintf(out, "  none found above the threshold\n");
	for (size_t k = 0; k < nb; k++) {
		const struct cp_search_node *n = &s->graph.nodes[b[k]];
		cp_search_focus_name(s, b[k], name, sizeof name);
		fprintf(out, "  %2zu. %-20s %5.1f%%  %s  (", k + 1, cp_hyp_names[n->hyp],
			100 * n->value, name);
		print_where(s, b[k], out);
		fprintf(out, ") found at %.2f s\n", n->decided);
	}
	fprintf(out, "\nSearch history graph:\n");
	for (size_t i = 0; i < s->graph.n; i++) {
		const struct cp_search_node *n = &s->graph.nodes[i];
		cp_search_focus_name(s, (uint32_t)i, name, sizeof name);
		fprintf(out, "  #%-3zu %-7s %5.1f%% %-20s %s", i, state_name[n->state],
			100 * n->value, cp_hyp_names[n->hyp], name);
		if (n->parent >= 0)
			fprintf(out, "  <- #%d", n->parent);
		if (n->deep)
			fprintf(out, "  (deep start)");
		if (s->info[i].note)
			fprintf(out, "  [%s]", s->info[i].note);
		fprintf(out, "\n");
	}
	for (size_t i = 0; i < s->nnotes; i++)
		fprintf(out, "note: %s\n", s->notes[i]);
	free(b);
}

/* v's characters, escaped for a JSON string. */
static void json_str_body(FILE *out, const char *v)
{
	for (const unsigned char *p = (const unsigned char *)v; *p; p++)
		if (*p == '"' || *p == '\\')
			fprintf(out, "\\%c", *p);
		else if (*p < 0x20)
			fprintf(out, "\\u%04x", *p);
		else
			fputc(*p, out);
}

static void json_str(FILE *out, const char *v)
{
	if (!v) {
		fputs("null", out);
		return;
	}
	fputc('"', out);
	json_str_body(out, v);
	fputc('"', out);
}

static const char *focus_kind(const struct cp_search_node *n)
{
	return n->sync >= 0 ? "syncobject" : n->kind == CP_FOCUS_LOOP ? "loop" : "function";
}

/* Node i of s as JSON; its id and parent's numbered from base (the nodes of the searches
 * before it). */
static void json_node(const struct cp_search *s, uint32_t i, FILE *out, const char *first,
		      uint32_t base)
{
	char name[512];
	const struct cp_search_node *n = &s->graph.nodes[i];
	const struct cp_search_info *in = &s->info[i];
	const struct cp_code_loop *l = n->kind == CP_FOCUS_LOOP ? &s->model.loops[n->target] : NULL;
	cp_search_focus_name(s, i, name, sizeof name);
	fprintf(out, "{%s\"id\": %u, \"parent\": %d, \"pid\": %d, \"hypothesis\": ", first,
		base + i, n->parent < 0 ? -1 : (int)base + n->parent, s->pid);
	json_str(out, cp_hyp_names[n->hyp]);
	fprintf(out, ", \"kind\": \"%s\", \"focus\": ", focus_kind(n));
	json_str(out, name);
	const struct cp_code_func *func = &s->model.funcs[l ? l->func : n->target];
	fprintf(out, ", \"module\": ");
	json_str(out, s->model.modules[func->module].path);
	fprintf(out, ", \"function\": ");
	json_str(out, func->name);
	if (n->thread >= 0)
		fprintf(out, ", \"thread\": %d", s->tids[n->thread]);
	else
		fprintf(out, ", \"thread\": null");
	fprintf(out, ", \"address\": \"0x%llx\", \"file\": ",
		(unsigned long long)(l ? l->header : s->model.funcs[n->target].lo));
	json_str(out, in->file);
	fprintf(out,
		", \"line\": %d, \"line_end\": %d, \"state\": \"%s\", \"value\": %.6f, "
		"\"started_s\": %.3f, "
		"\"decided_s\": %.3f, \"deep_start\": %s, \"calls\": %.0f, \"iterations\": %.0f, "
		"\"probe_time_ns\": %.0f, \"note\": ",
		in->line, in->line_end ? in->line_end : in->line, state_name[n->state], n->value,
		in->started, n->decided, n->deep ? "true" : "false", in->calls, in->iterations,
		in->probe_ns);
	json_str(out, in->note);
	fputc('}', out);
}

/* The whole of searches v[0..n): experiments, rounds, time and the probes' cost. */
struct totals {
	size_t experiments, intervals, queued;
	double elapsed, cost_max, cost_sum;
};

static struct totals totals_of(const struct cp_search *v, size_t n)
{
	struct totals t;
	memset(&t, 0, sizeof t);
	for (size_t k = 0; k < n; k++) {
		t.experiments += v[k].experiments;
		t.intervals += v[k].intervals;
		t.queued += v[k].queued_rounds;
		t.elapsed += v[k].elapsed;
		t.cost_sum += v[k].cost_sum;
		t.cost_max = v[k].cost_max > t.cost_max ? v[k].cost_max : t.cost_max;
	}
	return t;
}

/* The header: the first search's program and options, the totals, the last search's end. */
static void json_header(const struct cp_search *v, size_t n, FILE *out)
{
	const struct cp_search *s = &v[0], *last = &v[n - 1];
	struct totals t = totals_of(v, n);
	fprintf(out, "{\n  \"version\": 1,\n  \"program\": ");
	json_str(out, s->exe);
	fprintf(out,
		",\n  \"pid\": %d,\n  \"threshold\": %.4f,\n  \"cost_limit\": %.4f,\n"
		"  \"hypotheses\": [",
		s->pid, s->o.threshold, s->o.cost_limit);
	for (int h = 0, first = 1; h < CP_HYP_N; h++)
		if (s->o.hyps & (1u << h)) {
			fprintf(out, "%s\"%s\"", first ? "" : ", ", cp_hyp_names[h]);
			first = 0;
		}
	fprintf(out,
		"],\n  \"duration_s\": %.3f,\n  \"experiments\": %zu,\n"
		"  \"experiments_per_s\": %.3f,\n  \"intervals\": %zu,\n"
		"  \"program_exited\": %s,\n  \"stopped_by_for\": %s,\n  \"interrupted\": %s,\n"
		"  \"cost\": {\"calibrated\": %s, \"per_call_ns\": %.1f, \"per_edge_ns\": %.1f, "
		"\"max\": %.5f, \"mean\": %.5f, \"rounds_queued\": %zu},\n",
		t.elapsed, t.experiments, t.elapsed > 0 ? (double)t.experiments / t.elapsed : 0,
		t.intervals, last->program_exited ? "true" : "false",
		last->stopped_by_for ? "true" : "false", last->interrupted ? "true" : "false",
		s->o.costs.calibrated ? "true" : "false", s->per_call_ns, s->per_edge_ns,
		t.cost_max, t.elapsed > 0 ? t.cost_sum / t.elapsed : 0, t.queued);
}

/* "processes": each search's process, why it was chosen, its share of the nodes. */
static void json_processes(const struct cp_search *v, size_t n, FILE *out)
{
	size_t base = 0;
	fprintf(out, "  \"processes\": [");
	for (size_t k = 0; k < n; k++) {
		const struct cp_search *s = &v[k];
		fprintf(out, "%s\n    {\"pid\": %d, \"gen\": %ld, \"program\": ", k ? "," : "",
			s->pid, s->gen);
		json_str(out, s->exe);
		fprintf(out, ", \"command\": ");
		json_str(out, s->command[0] ? s->command : NULL);
		fprintf(out, ", \"reason\": ");
		json_str(out, s->reason[0] ? s->reason : NULL);
		fprintf(out,
			", \"first_node\": %zu, \"nodes\": %zu, \"duration_s\": %.3f, "
			"\"experiments\": %zu, \"program_exited\": %s}",
			base, s->graph.n, s->elapsed, s->experiments,
			s->program_exited ? "true" : "false");
		base += s->graph.n;
	}
	fprintf(out, "\n  ],\n");
}

/* The bottlenecks of the searches, ranked search by search. */
static void json_bottlenecks(const struct cp_search *v, size_t n, FILE *out)
{
	size_t rank = 0;
	uint32_t base = 0;
	fprintf(out, "  \"bottlenecks\": [");
	for (size_t k = 0; k < n; base += (uint32_t)v[k].graph.n, k++) {
		const struct cp_search *s = &v[k];
		uint32_t *b = malloc((s->graph.n + 1) * sizeof *b);
		size_t nb = b ? cp_search_bottlenecks(s, b, s->graph.n) : 0;
		for (size_t j = 0; j < nb; j++) {
			char first[96];
			snprintf(first, sizeof first, "\"rank\": %zu, \"threshold\": %.4f, ",
				 ++rank, s->o.threshold);
			fprintf(out, "%s\n    ", rank > 1 ? "," : "");
			json_node(s, b[j], out, first, base);
		}
		free(b);
	}
	fprintf(out, "\n  ],\n");
}

void cp_search_print_json_all(const struct cp_search *v, size_t n, FILE *out)
{
	uint32_t base = 0;
	size_t written = 0;
	if (!n)
		return;
	json_header(v, n, out);
	json_processes(v, n, out);
	json_bottlenecks(v, n, out);
	fprintf(out, "  \"nodes\": [");
	for (size_t k = 0; k < n; base += (uint32_t)v[k].graph.n, k++)
		for (size_t i = 0; i < v[k].graph.n; i++) {
			fprintf(out, "%s\n    ", written++ ? "," : "");
			json_node(&v[k], (uint32_t)i, out, "", base);
		}
	fprintf(out, "\n  ],\n  \"notes\": [");
	written = 0;
	for (size_t k = 0; k < n; k++)
		for (size_t i = 0; i < v[k].nnotes; i++) {
			char pre[48] = "";
			if (n > 1)
				snprintf(pre, sizeof pre, "process %d: ", v[k].pid);
			fprintf(out, "%s\n    ", written++ ? "," : "");
			fprintf(out, "\"%s", pre);
			json_str_body(out, v[k].notes[i]);
			fputc('"', out);
		}
	fprintf(out, "\n  ]\n}\n");
}

void cp_search_print_json(const struct cp_search *s, FILE *out)
{
	cp_search_print_json_all(s, 1, out);
}

void cp_search_print_text_all(const struct cp_search *v, size_t n, FILE *out)
{
	for (size_t k = 0; k < n; k++) {
		if (k)
			fputc('\n', out);
		cp_search_print_text(&v[k], out);
	}
}

void cp_search_print_dot_all(const struct cp_search *v, size_t n, FILE *out)
{
	for (size_t k = 0; k < n; k++)
		cp_search_print_dot(&v[k], out);
}

void cp_search_print_dot(const struct cp_search *s, FILE *out)
{
	cp_search_graph_dot(&s->graph, &s->model, cp_hyp_names, out);
}

/* Search s's rows into rows[base..], its bottlenecks ranked from *rank + 1 on. */
static void db_rows(const struct cp_search *s, struct cp_db_search_row *rows, char (*names)[512],
		    int base, int *rank)
{
	uint32_t *b = calloc(s->graph.n + 1, sizeof *b);
	size_t nb = b ? cp_search_bottlenecks(s, b, s->graph.n) : 0;
	for (size_t i = 0; i < s->graph.n; i++) {
		const struct cp_search_node *n = &s->graph.nodes[i];
		const struct cp_search_info *in = &s->info[i];
		const struct cp_code_loop *l =
		    n->kind == CP_FOCUS_LOOP ? &s->model.loops[n->target] : NULL;
		cp_search_focus_name(s, (uint32_t)i, names[i], sizeof names[i]);
		rows[i] = (struct cp_db_search_row){
		    .id = base + (int)i,
		    .parent = n->parent < 0 ? -1 : base + n->parent,
		    .hypothesis = cp_hyp_names[n->hyp],
		    .kind = focus_kind(n),
		    .focus = names[i],
		    .function = s->model.funcs[l ? l->func : n->target].name,
		    .file = in->file,
		    .state = state_name[n->state],
		    .note = in->note,
		    .line = in->line,
		    .address = l ? l->header : s->model.funcs[n->target].lo,
		    .value = n->value,
		    .started_s = in->started,
		    .decided_s = n->decided,
		    .calls = in->calls,
		    .iterations = in->iterations,
		    .probe_time_ns = in->probe_ns,
		    .deep_start = n->deep,
		};
	}
	for (size_t k = 0; k < nb; k++)
		rows[b[k]].rank = ++*rank;
	free(b);
}

int cp_search_store_db_all(const struct cp_search *v, size_t n, const char *path)
{
	size_t total = 0;
	int base = 0, rank = 0;
	for (size_t k = 0; k < n; k++)
		total += v[k].graph.n;
	struct cp_db_search_row *rows = calloc(total + 1, sizeof *rows);
	char(*names)[512] = calloc(total + 1, sizeof *names);
	if (!rows || !names) {
		free(rows), free(names);
		return cp_error(CP_ENOMEM, "out of memory");
	}
	for (size_t k = 0; k < n; base += (int)v[k].graph.n, k++)
		db_rows(&v[k], rows + base, names + base, base, &rank);
	int rc = cp_db_put_search(path, rows, total);
	free(rows), free(names);
	return rc;
}

int cp_search_store_db(const struct cp_search *s, const char *path)
{
	return cp_search_store_db_all(s, 1, path);
}
