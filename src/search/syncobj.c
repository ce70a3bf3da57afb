/* The SyncObject hierarchy of the search (syncobj.h). */
#include "search/syncobj.h"

#include "base/error.h"
#include "base/strbuf.h"
#include "base/xalloc.h"
#include "db/sync-objects.h"
#include "search/search.h"

#include <stdlib.h>
#include <string.h>

#define SYNC_OBJECTS_MAX 16 /* objects refined per kind */

struct base_object {
	int pid;
	uint64_t object;
	const char *kind; /* cp_sync_kind_name's (static) */
	int peer, tag;
	uint64_t wait_ns;
};

struct cp_search_sync {
	struct cp_search_syncfocus *v;
	size_t n;
	struct base_object *base;
	size_t nbase;
	struct cp_search_snap t0; /* the baseline's time (wall, runnable threads) only */
	int refined;
};

static struct cp_search_sync *state(struct cp_search *s)
{
	if (!s->syncobj)
		s->syncobj = xcalloc(1, sizeof *s->syncobj);
	return s->syncobj;
}

/* The rows of the searched process (the ranks of an MPI job share the directory: each
 * search holds only its own rank's waits against its own time). 0 or CP_E*. */
static int own_rows(const struct cp_search *s, struct cp_sync_rows *rows)
{
	int rc = cp_sync_rows_from_dir(s->dir, rows);
	if (rc)
		return rc;
	size_t k = 0;
	for (size_t i = 0; i < rows->n; i++) {
		struct cp_sync_row tmp = rows->v[k];
		rows->v[k] = rows->v[i];
		rows->v[i] = tmp;
		k += rows->v[k].pid == s->pid;
	}
	struct cp_sync_rows rest = {rows->v + k, rows->n - k, 0};
	for (size_t i = 0; i < rest.n; i++) { /* the other processes' strings */
		free(rest.v[i].symbol);
		free(rest.v[i].module);
		free(rest.v[i].site);
		free(rest.v[i].site_proc);
		free(rest.v[i].site_file);
	}
	rows->n = k;
	return 0;
}

void cp_search_sync_start(struct cp_search *s, const struct cp_search_snap *a)
{
	struct cp_search_sync *y = state(s);
	struct cp_sync_rows rows;
	y->t0.wall = a->wall;
	y->t0.run_delay_ns = a->run_delay_ns;
	y->t0.nlive = a->nlive;
	if (own_rows(s, &rows)) {
		cp_error_clear();
		return;
	}
	y->base = xcalloc(rows.n + 1, sizeof *y->base);
	for (size_t i = 0; i < rows.n; i++) {
		const struct cp_sync_row *r = &rows.v[i];
		y->base[y->nbase++] =
		    (struct base_object){r->pid, r->object, r->kind, r->peer, r->tag, r->wait_ns};
	}
	cp_sync_rows_release(&rows);
}

/* Waits of object o since the baseline. */
static double delta_ns(const struct cp_search_sync *y, const struct cp_sync_object *o)
{
	double ns = (double)o->wait_ns;
	for (size_t i = 0; i < y->nbase; i++) {
		const struct base_object *b = &y->base[i];
		if (b->pid == o->pid && b->object == o->object && !strcmp(b->kind, o->kind) &&
		    b->peer == o->peer && b->tag == o->tag)
			ns -= (double)b->wait_ns;
	}
	return ns > 0 ? ns : 0;
}

static int32_t focus_add(struct cp_search_sync *y, int level, const char *name, const char *file,
			 int line)
{
	y->v = xrealloc(y->v, (y->n + 1) * sizeof *y->v);
	y->v[y->n] =
	    (struct cp_search_syncfocus){level, xstrdup(name), file ? xstrdup(file) : NULL, line};
	return (int32_t)y->n++;
}

/* The model's function named proc, else fallback. */
static uint32_t model_func(const struct cp_search *s, const char *proc, uint32_t fallback)
{
	for (size_t f = 0; proc && f < s->model.nfuncs; f++)
		if (!strcmp(s->model.funcs[f].name, proc))
			return (uint32_t)f;
	return fallback;
}

/* Adds and decides the node of focus (level, name) under parent: its index. */
static uint32_t decide_node(struct cp_search *s, uint32_t hyp, uint32_t target, int32_t parent,
			    int32_t focus, double value, double t)
{
	uint32_t c = cp_search_node_sync(&s->graph, hyp, target, focus, parent);
	cp_search_sync_info(s);
	const struct cp_search_syncfocus *f = &s->syncobj->v[focus];
	if (f->file) { /* where: the top call site, not the function's entry */
		free(s->info[c].file);
		s->info[c].file = xstrdup(f->file);
		s->info[c].line = f->line;
	}
	s->info[c].started = t;
	s->graph.nodes[c].state = CP_NODE_PENDING;
	cp_search_decide(&s->graph, &s->model, c, value >= s->o.threshold, value, t);
	s->experiments++;
	return c;
}

/* The objects of kind k (true node parent), heaviest first. */
static void refine_kind(struct cp_search *s, const struct cp_sync_summary *sum, const char *kind,
			uint32_t hyp, uint32_t target, uint32_t parent, double time, double t)
{
	struct cp_search_sync *y = s->syncobj;
	struct strbuf name;
	strbuf_init(&name);
	for (size_t j = 0, made = 0; j < sum->n && made < SYNC_OBJECTS_MAX; j++) {
		const struct cp_sync_object *o = &sum->v[j];
		double v = delta_ns(y, o) / time;
		if (strcmp(o->kind, kind) || v <= 0)
			continue;
		strbuf_clear(&name);
		strbuf_addf(&name, "/SyncObject/%s/", kind);
		cp_sync_object_name(o, &name);
		const struct cp_sync_row *top = o->nsites ? o->sites[0].row : NULL;
		int32_t focus = focus_add(y, 2, name.buf, top ? top->site_file : NULL,
					  top ? top->site_line : 0);
		uint32_t f = model_func(s, top ? top->site_proc : NULL, target);
		decide_node(s, hyp, f, (int32_t)parent, focus, v > 1 ? 1 : v, t);
		made++;
	}
	strbuf_release(&name);
}

/* The program's time since the baseline for the waits: the wall time since then times the
 * threads active in node i's experiment (a, b] (cp_search_snap_time's rule; the baseline
 * keeps no per-thread values, and over the whole run an MPI library's progress threads,
 * busy only at start-up, would count as active and dilute the waits). */
static double sync_time(const struct cp_search_sync *y, const struct cp_search_snap *a,
			const struct cp_search_snap *b)
{
	double wall = b->wall - a->wall, since = b->wall - y->t0.wall;
	double time = cp_search_snap_time(a, b);
	return wall > 0 && since > wall ? time * since / wall : time;
}

size_t cp_search_sync_refine(struct cp_search *s, uint32_t i, const struct cp_search_snap *a,
			     const struct cp_search_snap *b, double t)
{
	struct cp_search_sync *y = state(s);
	size_t before = s->graph.n;
	struct cp_sync_rows rows;
	if (y->refined || own_rows(s, &rows)) {
		cp_error_clear();
		return 0;
	}
	y->refined = 1;
	struct cp_sync_summary sum;
	cp_sync_summarize(&rows, &sum);
	const struct cp_search_node n = s->graph.nodes[i];
	double time = sync_time(y, a, b), all = 0;
	for (size_t j = 0; j < sum.n; j++)
		all += strcmp(sum.v[j].kind, "lost") ? delta_ns(y, &sum.v[j]) : 0;
	int32_t focus = focus_add(y, 0, "/SyncObject", NULL, 0);
	uint32_t root = decide_node(s, n.hyp, n.target, -1, focus, all > time ? 1 : all / time, t);
	for (unsigned k = 1; s->graph.nodes[root].state == CP_NODE_TRUE && cp_sync_kind_name(k);
	     k++) {
		const char *kind = cp_sync_kind_name(k);
		double v = 0;
		for (size_t j = 0; j < sum.n; j++)
			v += strcmp(sum.v[j].kind, kind) ? 0 : delta_ns(y, &sum.v[j]);
		if (v <= 0)
			continue;
		char name[64];
		snprintf(name, sizeof name, "/SyncObject/%s", kind);
		focus = focus_add(y, 1, name, NULL, 0);
		uint32_t c = decide_node(s, n.hyp, n.target, (int32_t)root, focus,
					 v > time ? 1 : v / time, t);
		if (s->graph.nodes[c].state == CP_NODE_TRUE)
			refine_kind(s, &sum, kind, n.hyp, n.target, c, time, t);
	}
	cp_sync_summary_release(&sum);
	cp_sync_rows_release(&rows);
	return s->graph.n - before;
}

const struct cp_search_syncfocus *cp_search_sync_focus(const struct cp_search *s, int32_t sync)
{
	if (!s->syncobj || sync < 0 || (size_t)sync >= s->syncobj->n)
		return NULL;
	return &s->syncobj->v[sync];
}

void cp_search_sync_release(struct cp_search *s)
{
	struct cp_search_sync *y = s->syncobj;
	if (!y)
		return;
	for (size_t i = 0; i < y->n; i++) {
		free(y->v[i].name);
		free(y->v[i].file);
	}
	free(y->v);
	free(y->base);
	free(y);
	s->syncobj = NULL;
}
