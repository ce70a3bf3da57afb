/* The callgrind profile format (valgrind's docs/callgrind-format): costs of every raw
 * metric per procedure and source line (`positions: line`, `events:` the metric names),
 * calls between procedures as cfn=/calls= lines followed by the inclusive cost of the
 * call. Calling contexts are merged per procedure, as callgrind does. Inlined code is cost
 * of the out-of-line procedure it was inlined into, at the inlined code's own file and
 * line: a file change fi=/fe= inside the fn= block (valgrind writes inlined code so).
 * Costs are rounded to integers; `summary:` is the sum of the written self costs. */
#include "export/export-impl.h"
#include "export/export.h"

#include "base/error.h"
#include "base/xalloc.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct cg_entry {
	uint32_t fn;   /* procedure key of the frame holding the cost (see fn_key) */
	uint32_t file; /* position: file id (CP_DB_NONE unknown) */
	uint32_t line;
	uint32_t callee; /* CP_DB_NONE: self cost; else the called procedure key */
	uint64_t calls;
	double *cost; /* [nraw] */
};

/* Procedures by id; [partial unwind] and [unknown] after them. */
static uint32_t fn_key(const struct cp_db *db, uint32_t frame)
{
	if (frame == CP_DB_NONE)
		return (uint32_t)db->nprocs + 1;
	const struct cp_db_scope *s = &db->scopes[frame];
	if (s->kind == CP_DBK_PROC && s->proc < db->nprocs)
		return s->proc;
	if (s->kind == CP_DBK_PARTIAL)
		return (uint32_t)db->nprocs;
	return (uint32_t)db->nprocs + 1;
}

static const char *fn_name(const struct cp_db *db, uint32_t key)
{
	if (key < db->nprocs && db->procs[key].name)
		return db->procs[key].name;
	return key == db->nprocs ? "[partial unwind]" : "[unknown]";
}

static const char *fn_file(const struct cp_db *db, uint32_t key)
{
	if (key < db->nprocs && db->procs[key].file < db->nfiles)
		return cp_export_file(db, db->procs[key].file);
	return "???";
}

static const char *fn_module(const struct cp_db *db, uint32_t key)
{
	if (key < db->nprocs && db->procs[key].module < db->nmodules)
		return db->modules[db->procs[key].module].path;
	return "???";
}

static int entry_cmp(const void *a, const void *b)
{
	const struct cg_entry *x = a, *y = b;
	if (x->fn != y->fn)
		return x->fn < y->fn ? -1 : 1;
	/* Self costs first, then calls (callee CP_DB_NONE sorts last: flip it). */
	uint32_t xc = x->callee + 1, yc = y->callee + 1;
	if (xc != yc)
		return xc < yc ? -1 : 1;
	if (x->file != y->file)
		return x->file < y->file ? -1 : 1;
	if (x->line != y->line)
		return x->line < y->line ? -1 : 1;
	return 0;
}

/* The position a frame's cost or call is at: the file of its caller (for a call) or its
 * own (for a statement), or the file of the procedure when unknown. */
static uint32_t pos_file(const struct cp_db *db, const struct cp_db_scope *s, uint32_t fn)
{
	if (s->file != CP_DB_NONE)
		return s->file;
	return fn < db->nprocs ? db->procs[fn].file : CP_DB_NONE;
}

static void put_costs(FILE *out, uint32_t line, const double *cost, size_t nraw)
{
	fprintf(out, "%u", line);
	for (size_t i = 0; i < nraw; i++)
		fprintf(out, " %lld", llround(cost[i]));
	fputc('\n', out);
}

static void put_file_change(const struct cp_db *db, FILE *out, uint32_t key, uint32_t file,
			    uint32_t *cur)
{
	if (file == *cur)
		return;
	uint32_t home = key < db->nprocs ? db->procs[key].file : CP_DB_NONE;
	const char *path = file < db->nfiles ? cp_export_file(db, file) : "???";
	fprintf(out, "%s=%s\n", file == home ? "fe" : "fi", path);
	*cur = file;
}

/* Collects self costs and calls, merged by (fn, callee, file, line). */
static struct cg_entry *collect(const struct cp_db *db, uint32_t metric, size_t *n_out,
				double **pool_out)
{
	size_t nraw = cp_db_nraw(db), n = 0;
	int exact;
	uint64_t *calls = cp_export_call_counts(db, metric, &exact);
	struct cg_entry *e = xcalloc(2 * db->nscopes + 1, sizeof(*e));
	double *pool = xcalloc((2 * db->nscopes + 1) * nraw, sizeof(*pool));
	for (size_t i = 0; i < 2 * db->nscopes + 1; i++)
		e[i].cost = pool + i * nraw;
	for (size_t s = 0; s < db->nscopes; s++) {
		const struct cp_db_scope *sc = &db->scopes[s];
		int any = 0;
		for (size_t m = 0; m < nraw; m++)
			any |= cp_export_excl(db, (uint32_t)s, (uint32_t)m) != 0;
		uint32_t fr = s ? cp_export_proc_frame_of(db, (uint32_t)s) : CP_DB_NONE;
		if (fr == CP_DB_NONE && s)
			fr = cp_export_frame_of(db, (uint32_t)s); /* partial-unwind stacks */
		if (any) {
			struct cg_entry *x = &e[n++];
			x->fn = fn_key(db, fr);
			x->callee = CP_DB_NONE;
			x->file = pos_file(db, sc, x->fn);
			x->line = sc->line;
			for (size_t m = 0; m < nraw; m++)
				x->cost[m] = cp_export_excl(db, (uint32_t)s, (uint32_t)m);
		}
		if (sc->kind != CP_DBK_PROC || !s)
			continue;
		uint32_t caller = cp_export_frame_of(db, sc->parent);
		if (caller != CP_DB_NONE && db->scopes[caller].kind != CP_DBK_PARTIAL)
			caller = cp_export_proc_frame_of(db, sc->parent);
		if (caller == CP_DB_NONE)
			continue; /* an outermost frame (main, a thread's start) */
		int incl = 0;
		for (size_t m = 0; m < nraw; m++)
			incl |= cp_export_incl(db, (uint32_t)s, (uint32_t)m) != 0;
		if (!incl && !calls[s])
			continue;
		struct cg_entry *x = &e[n++];
		x->fn = fn_key(db, caller);
		x->callee = fn_key(db, (uint32_t)s);
		x->file = pos_file(db, sc, x->fn);
		x->line = sc->line;
		x->calls = calls[s];
		for (size_t m = 0; m < nraw; m++)
			x->cost[m] = cp_export_incl(db, (uint32_t)s, (uint32_t)m);
	}
	free(calls);
	qsort(e, n, sizeof(*e), entry_cmp);
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		if (k && !entry_cmp(&e[k - 1], &e[i])) {
			e[k - 1].calls += e[i].calls;
			for (size_t m = 0; m < nraw; m++)
				e[k - 1].cost[m] += e[i].cost[m];
		} else {
			double *c = e[k].cost;
			if (k != i) {
				memcpy(c, e[i].cost, nraw * sizeof(*c));
				e[k] = e[i];
				e[k].cost = c;
			}
			k++;
		}
	}
	*n_out = k;
	*pool_out = pool;
	return e;
}

static void put_header(const struct cp_db *db, FILE *out, const double *total)
{
	size_t nraw = cp_db_nraw(db);
	fputs("# callgrind format\nversion: 1\n", out);
	fprintf(out, "creator: callpath %s\n", CALLPATH_VERSION);
	if (db->run.command)
		fprintf(out, "cmd: %s\n", db->run.command);
	fputs("part: 1\n\n", out);
	for (size_t m = 0; m < nraw; m++)
		fprintf(out, "event: %s : %s (%s)\n", db->metrics[m].name,
			db->metrics[m].description ? db->metrics[m].description
						   : db->metrics[m].name,
			db->metrics[m].unit ? db->metrics[m].unit : "");
	fputs("positions: line\nevents:", out);
	for (size_t m = 0; m < nraw; m++)
		fprintf(out, " %s", db->metrics[m].name);
	fputs("\nsummary:", out);
	for (size_t m = 0; m < nraw; m++)
		fprintf(out, " %lld", llround(total[m]));
	fputs("\n\n", out);
}

int cp_export_callgrind(const struct cp_db *db, const struct cp_export_options *o, FILE *out)
{
	uint32_t metric;
	int rc = cp_export_start(db, o, &metric);
	if (rc)
		return rc;
	size_t nraw = cp_db_nraw(db), n;
	double *pool;
	struct cg_entry *e = collect(db, metric, &n, &pool);
	double *total = xcalloc(nraw, sizeof(*total));
	for (size_t i = 0; i < n; i++)
		if (e[i].callee == CP_DB_NONE)
			for (size_t m = 0; m < nraw; m++)
				total[m] += (double)llround(e[i].cost[m]);
	put_header(db, out, total);
	uint32_t cur_fn = CP_DB_NONE, cur_file = CP_DB_NONE;
	for (size_t i = 0; i < n; i++) {
		const struct cg_entry *x = &e[i];
		if (x->fn != cur_fn) {
			cur_fn = x->fn;
			fprintf(out, "\nob=%s\nfl=%s\nfn=%s\n", fn_module(db, x->fn),
				fn_file(db, x->fn), fn_name(db, x->fn));
			cur_file = x->fn < db->nprocs ? db->procs[x->fn].file : CP_DB_NONE;
			if (x->fn >= db->nprocs || cur_file >= db->nfiles)
				cur_file = CP_DB_NONE;
		}
		if (x->file < db->nfiles || cur_file < db->nfiles)
			put_file_change(db, out, x->fn, x->file < db->nfiles ? x->file : CP_DB_NONE,
					&cur_file);
		if (x->callee != CP_DB_NONE) {
			fprintf(out, "cob=%s\ncfi=%s\ncfn=%s\n", fn_module(db, x->callee),
				fn_file(db, x->callee), fn_name(db, x->callee));
			uint32_t target = x->callee < db->nprocs ? db->procs[x->callee].line : 0;
			fprintf(out, "calls=%llu %u\n", (unsigned long long)x->calls, target);
		}
		put_costs(out, x->line, x->cost, nraw);
	}
	free(total);
	free(pool);
	free(e);
	return 0;
}
