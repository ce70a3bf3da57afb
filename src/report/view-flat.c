/* The flat view (load module > file > procedure > loops > statement), derived from a
 * top-down calling context tree whose own costs sit on its leaves.
 *
 * Every cost of the top-down tree lands on exactly one row at each level, so the flat view
 * conserves cost: each level's exclusive values add up to the total, and a module's, file's
 * or procedure's inclusive value counts each sample once (recursion included). Code without
 * line information keeps its full cost: its procedure sits under a `<no source>` file, and
 * what it spends outside statements is a `<no line>` statement where the procedure or loop
 * also has other children (so that --flatten loses nothing). */
#include "report/view.h"

#include "base/xalloc.h"

#include <stdlib.h>
#include <string.h>

/* One procedure frame of a sample's path, innermost first. */
struct path_frame {
	const char *proc, *module;
	const char *file;     /* the procedure's own source file on this path: where its
			       * outermost inlined frame was inlined, else the file of loc */
	const char *loc_file; /* where in this procedure the path goes on (statement or call) */
	int loc_line;
	int has_loc;		  /* loc is a known line (else the cost has no line) */
	size_t body_first, nbody; /* its loops around loc, innermost first (those of code
				   * inlined into it included) */
};

struct path {
	struct path_frame *fr;
	size_t nfr, fr_alloc;
	uint32_t *body; /* top-down loop nodes */
	size_t nbody, body_alloc;
};

/* The frame of the procedure at node x, whose path goes on at loc (file, line). */
static void frame_add(struct path *p, const struct cp_vnode *x, const char *file,
		      const char *loc_file, int loc_line, size_t body_first)
{
	XGROW(p->fr, p->nfr + 1, p->fr_alloc);
	struct path_frame *f = &p->fr[p->nfr++];
	f->proc = x->name;
	f->module = x->module;
	f->file = file;
	f->loc_file = loc_file;
	f->loc_line = loc_line;
	f->has_loc = loc_file || loc_line > 0;
	f->body_first = body_first;
	f->nbody = p->nbody - body_first;
}

/* Collects the procedure frames from node up to the root, with the loops of each frame's
 * body. */
static void path_collect(const struct cp_view *td, uint32_t node, struct path *p)
{
	p->nfr = p->nbody = 0;
	const struct cp_vnode *x = &td->nodes[node];
	const char *loc_file = x->kind == CP_VK_LINE ? x->file : NULL;
	int loc_line = x->kind == CP_VK_LINE ? x->line : 0;
	const char *file = loc_file;
	size_t body_first = 0;
	for (uint32_t i = node; i != UINT32_MAX; i = td->nodes[i].parent) {
		x = &td->nodes[i];
		if (x->kind == CP_VK_INLINED) {
			file = x->file;
		} else if (x->kind == CP_VK_LOOP) {
			XGROW(p->body, p->nbody + 1, p->body_alloc);
			p->body[p->nbody++] = i;
		} else if (x->kind == CP_VK_PROCEDURE) {
			frame_add(p, x, file, loc_file, loc_line, body_first);
			body_first = p->nbody;
			file = loc_file = x->file;
			loc_line = x->line;
		}
	}
}

/* The source file of each procedure (name, module): the first one its paths in the tree
 * show, so that a procedure is one row of the flat view even when some of its costs have
 * no line, and the same row whichever threads are selected. */
struct proc_files {
	struct cp_hashtab tab;
	struct proc_file {
		const char *name, *module, *file;
	} * v;
	size_t n, alloc;
};

static int proc_file_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct proc_file *e = &((const struct proc_files *)ctx)->v[idx];
	const struct path_frame *f = key;
	return e->name == f->proc && e->module == f->module;
}

static struct proc_file *proc_file_get(struct proc_files *pf, const struct path_frame *f)
{
	uint64_t h = cp_hash_mix((uintptr_t)f->proc, (uintptr_t)f->module);
	uint32_t i = cp_hashtab_find(&pf->tab, h, proc_file_eq, pf, f);
	if (i == UINT32_MAX) {
		XGROW(pf->v, pf->n + 1, pf->alloc);
		i = (uint32_t)pf->n++;
		pf->v[i] = (struct proc_file){f->proc, f->module, NULL};
		cp_hashtab_insert(&pf->tab, h, i);
	}
	return &pf->v[i];
}

/* Adds vals once per sample (stamp) to the inclusive, and if excl to the exclusive, values. */
static void count_once(struct cp_view *v, uint32_t node, uint64_t stamp, const double *vals,
		       int excl, struct cp_view_contribs *rec)
{
	if (v->nodes[node].stamp == stamp)
		return;
	v->nodes[node].stamp = stamp;
	if (rec) {
		XGROW(rec->v, rec->n + 1, rec->alloc);
		rec->v[rec->n++] = (struct cp_view_contrib){node, (uint32_t)stamp, (uint32_t)excl};
	}
	double *in = cp_view_incl(v, node), *ex = cp_view_excl(v, node);
	for (size_t m = 0; m < v->nmetrics; m++) {
		in[m] += vals[m];
		if (excl)
			ex[m] += vals[m];
	}
}

/* The statement row of frame f below parent: its line, or for the innermost frame's cost
 * without a line, `<no line>` (NULL when the frame is a caller without a known call site). */
static uint32_t flat_stmt(struct cp_view *out, uint32_t parent, const struct path_frame *f,
			  int innermost)
{
	if (!f->has_loc && !innermost)
		return UINT32_MAX;
	const char *file = f->has_loc ? f->loc_file : NULL;
	int line = f->has_loc ? f->loc_line : 0;
	/* keyed by file:line; the display name is made once, when the node is new */
	uint32_t l = cp_view_child(out, parent, CP_VK_LINE, NULL, f->module, file, line);
	if (!out->nodes[l].name)
		out->nodes[l].name = f->has_loc ? cp_view_line_name(out->pool, file, line)
						: cp_intern(out->pool, CP_VIEW_NO_LINE);
	return l;
}

/* Module > file > procedure > loops > line. Code inlined into a procedure is the
 * procedure's own: its loops and statements hang below the procedure (the inlined frames
 * show in the top-down view). Costs outside any procedure frame (a partial call path that
 * found none) are a top-level `<partial call paths>` row. */
static void flat_path(struct cp_view *out, const struct cp_view *td, const struct path *p,
		      struct proc_files *pf, uint64_t stamp, const double *vals,
		      struct cp_view_contribs *rec)
{
	struct cp_intern *pool = out->pool;
	if (!p->nfr) {
		uint32_t x = cp_view_child(out, 0, CP_VK_PARTIAL, cp_intern(pool, CP_VIEW_PARTIAL),
					   NULL, NULL, 0);
		count_once(out, x, stamp, vals, 1, rec);
		return;
	}
	for (size_t j = 0; j < p->nfr; j++) {
		const struct path_frame *f = &p->fr[j];
		const char *mod = f->module ? f->module : cp_intern(pool, "<unknown>");
		const char *file = proc_file_get(pf, f)->file;
		int excl = j == 0;
		uint32_t m = cp_view_child(out, 0, CP_VK_MODULE, mod, f->module, NULL, 0);
		count_once(out, m, stamp, vals, excl, rec);
		uint32_t parent = cp_view_child(out, m, CP_VK_FILE,
						file ? file : cp_intern(pool, CP_VIEW_NO_SOURCE),
						f->module, file, 0);
		count_once(out, parent, stamp, vals, excl, rec);
		parent = cp_view_child(out, parent, CP_VK_PROCEDURE, f->proc, f->module, file, 0);
		count_once(out, parent, stamp, vals, excl, rec);
		for (size_t l = f->nbody; l-- > 0;) {
			const struct cp_vnode *b = &td->nodes[p->body[f->body_first + l]];
			uint32_t x = cp_view_child(out, parent, (enum cp_vkind)b->kind, b->name,
						   f->module, b->file, b->line);
			out->nodes[x].line_end = b->line_end;
			count_once(out, x, stamp, vals, excl, rec);
			parent = x;
		}
		uint32_t l = flat_stmt(out, parent, f, j == 0);
		if (l != UINT32_MAX)
			count_once(out, l, stamp, vals, excl, rec);
	}
}

/* A `<no line>` statement that is its procedure's or loop's only child says nothing the
 * row above it does not: unlink it (its values stay, unreachable). */
static void flat_prune_no_line(struct cp_view *out)
{
	for (uint32_t i = 1; i < out->n; i++) {
		const struct cp_vnode *x = &out->nodes[i];
		if (x->kind != CP_VK_LINE || x->file || x->line)
			continue;
		struct cp_vnode *par = &out->nodes[x->parent];
		if (par->first_child == i && par->last_child == i)
			par->first_child = par->last_child = UINT32_MAX;
	}
}

static int has_cost(const struct cp_view *v, uint32_t node)
{
	const double *e = cp_view_excl(v, node);
	for (size_t m = 0; m < v->nmetrics; m++)
		if (e[m] != 0)
			return 1;
	return 0;
}

void cp_view_flat(const struct cp_view *td, struct cp_view *out)
{
	cp_view_flat_rec(td, out, NULL);
}

void cp_view_flat_rec(const struct cp_view *td, struct cp_view *out, struct cp_view_contribs *rec)
{
	struct path p;
	struct proc_files pf;
	memset(&p, 0, sizeof p);
	memset(&pf, 0, sizeof pf);
	cp_hashtab_init(&pf.tab);
	cp_view_init(out, td->nmetrics, td->pool);
	/* the costs are the exclusive values of the leaves (own costs of frames and loops
	 * with children are on <no line> leaves, see profile.c) */
	for (int pass = 0; pass < 2; pass++) {
		for (uint32_t i = 1; i < td->n; i++) {
			/* the files from every path, with cost or not (the tree is the same
			 * whichever threads are selected, their values are not): a procedure
			 * is filed alike in every thread's view and in the view of all */
			if (td->nodes[i].first_child != UINT32_MAX || (pass && !has_cost(td, i)))
				continue;
			path_collect(td, i, &p);
			if (pass == 1) {
				flat_path(out, td, &p, &pf, i, cp_view_excl(td, i), rec);
				continue;
			}
			for (size_t j = 0; j < p.nfr; j++) {
				struct proc_file *e = proc_file_get(&pf, &p.fr[j]);
				if (!e->file)
					e->file = p.fr[j].file;
			}
		}
	}
	flat_prune_no_line(out);
	memcpy(cp_view_incl(out, 0), cp_view_incl(td, 0), td->nmetrics * sizeof(double));
	free(p.fr);
	free(p.body);
	free(pf.v);
	cp_hashtab_release(&pf.tab);
}
