/* The view trees: creation, inclusive sums, and the flat view derived from a top-down
 * calling context tree (the bottom-up view is in view-callers.c). */
#include "report/view.h"

#include "base/xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *cp_vkind_name(enum cp_vkind k)
{
	static const char *const names[] = {"root",   "procedure", "inlined", "line", "partial",
					    "module", "file",	   "caller",  "loop"};
	return (unsigned)k < sizeof names / sizeof names[0] ? names[k] : "unknown";
}

struct child_key {
	uint32_t parent, kind;
	const char *name, *module, *file;
	int line;
};

/* A statement is identified by its file and line; its name is only their display. */
static uint64_t key_hash(const struct child_key *k)
{
	uint64_t h = cp_hash_mix(k->parent, k->kind);
	h = cp_hash_mix(h, k->kind == CP_VK_LINE ? 0 : (uintptr_t)k->name);
	h = cp_hash_mix(h, (uintptr_t)k->module);
	h = cp_hash_mix(h, (uintptr_t)k->file);
	return cp_hash_mix(h, (uint64_t)k->line);
}

static int key_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct cp_vnode *n = &((const struct cp_view *)ctx)->nodes[idx];
	const struct child_key *k = key;
	return n->parent == k->parent && n->kind == k->kind &&
	       (n->name == k->name || k->kind == CP_VK_LINE) && n->module == k->module &&
	       n->file == k->file && n->line == k->line;
}

static uint32_t node_new(struct cp_view *v, const struct child_key *k)
{
	if (v->n + 1 > v->alloc) {
		XGROW(v->nodes, v->n + 1, v->alloc);
		/* +8: a view of zero metrics still gets distinct, valid pointers */
		v->incl = xrealloc(v->incl, v->alloc * v->nmetrics * sizeof(double) + 8);
		v->excl = xrealloc(v->excl, v->alloc * v->nmetrics * sizeof(double) + 8);
	}
	uint32_t i = (uint32_t)v->n++;
	struct cp_vnode *n = &v->nodes[i];
	memset(n, 0, sizeof *n);
	n->parent = k->parent;
	n->kind = k->kind;
	n->name = k->name;
	n->module = k->module;
	n->file = k->file;
	n->line = k->line;
	n->first_child = n->next_sibling = n->last_child = UINT32_MAX;
	n->stamp = UINT64_MAX;
	for (size_t m = 0; m < v->nmetrics; m++)
		cp_view_incl(v, i)[m] = cp_view_excl(v, i)[m] = 0;
	if (k->parent != UINT32_MAX) {
		struct cp_vnode *p = &v->nodes[k->parent];
		if (p->last_child == UINT32_MAX)
			p->first_child = i;
		else
			v->nodes[p->last_child].next_sibling = i;
		p->last_child = i;
	}
	return i;
}

void cp_view_init(struct cp_view *v, size_t nmetrics, struct cp_strpool *pool)
{
	memset(v, 0, sizeof *v);
	v->nmetrics = nmetrics;
	v->pool = pool;
	cp_itab_init(&v->children);
	struct child_key root = {UINT32_MAX, CP_VK_ROOT, cp_strpool_get(pool, "<total>"),
				 NULL,	     NULL,	 0};
	node_new(v, &root);
}

void cp_view_release(struct cp_view *v)
{
	free(v->nodes);
	free(v->incl);
	free(v->excl);
	cp_itab_release(&v->children);
	memset(v, 0, sizeof *v);
}

uint32_t cp_view_child(struct cp_view *v, uint32_t parent, enum cp_vkind kind, const char *name,
		       const char *module, const char *file, int line)
{
	struct child_key k = {parent, kind, name, module, file, line};
	uint64_t h = key_hash(&k);
	uint32_t i = cp_itab_find(&v->children, h, key_eq, v, &k);
	if (i != UINT32_MAX)
		return i;
	i = node_new(v, &k);
	cp_itab_insert(&v->children, h, i);
	return i;
}

uint32_t cp_view_find_like(const struct cp_view *v, uint32_t parent, const struct cp_view *other,
			   uint32_t like)
{
	const struct cp_vnode *o = &other->nodes[like];
	struct child_key k = {parent, o->kind, o->name, o->module, o->file, o->line};
	return cp_itab_find(&v->children, key_hash(&k), key_eq, v, &k);
}

uint32_t cp_view_append(struct cp_view *v, uint32_t parent, enum cp_vkind kind, const char *name,
			const char *module, const char *file, int line)
{
	struct child_key k = {parent, kind, name, module, file, line};
	return node_new(v, &k);
}

void cp_view_sum_inclusive(struct cp_view *v)
{
	size_t nm = v->nmetrics;
	memcpy(v->incl, v->excl, v->n * nm * sizeof(double));
	/* Children always have larger indices than their parents. */
	for (size_t i = v->n; i-- > 1;) {
		double *pi = cp_view_incl(v, v->nodes[i].parent),
		       *ci = cp_view_incl(v, (uint32_t)i);
		for (size_t m = 0; m < nm; m++)
			pi[m] += ci[m];
	}
	/* A frame's or loop's exclusive value is the cost of its body (inlined code and nested
	 * loops included, calls excluded): add each node's own cost to its enclosing loops and
	 * inlined frames up to its procedure frame. Own costs are the values before this pass,
	 * which in the incl array are gone, so walk from the deepest nodes up: a node's own
	 * cost is still intact in excl when its descendants have not been added to it yet. */
	double *own = xmalloc(v->n * nm * sizeof(double) + 8);
	memcpy(own, v->excl, v->n * nm * sizeof(double));
	for (size_t i = 1; i < v->n; i++) {
		uint32_t k = v->nodes[i].kind;
		if (k == CP_VK_PROCEDURE || k == CP_VK_PARTIAL)
			continue;
		const double *e = own + i * nm;
		int any = 0;
		for (size_t m = 0; m < nm; m++)
			any |= e[m] != 0;
		if (!any)
			continue;
		for (uint32_t a = v->nodes[i].parent; a != UINT32_MAX; a = v->nodes[a].parent) {
			uint32_t ak = v->nodes[a].kind;
			if (ak != CP_VK_INLINED && ak != CP_VK_PROCEDURE && ak != CP_VK_LOOP)
				break;
			double *ae = cp_view_excl(v, a);
			for (size_t m = 0; m < nm; m++)
				ae[m] += e[m];
			if (ak == CP_VK_PROCEDURE)
				break;
		}
	}
	free(own);
}

const char *cp_view_line_name(struct cp_strpool *pool, const char *file, int line)
{
	char buf[512];
	const char *base = file ? strrchr(file, '/') : NULL;
	base = base ? base + 1 : file ? file : "<unknown file>";
	if (line > 0)
		snprintf(buf, sizeof buf, "%s:%d", base, line);
	else
		snprintf(buf, sizeof buf, "%s", base);
	return cp_strpool_get(pool, buf);
}

const char *cp_view_loop_name(struct cp_strpool *pool, const char *file, int lo, int hi)
{
	char buf[600];
	const char *base = file ? strrchr(file, '/') : NULL;
	base = base ? base + 1 : file ? file : "<unknown file>";
	if (lo > 0 && hi > lo)
		snprintf(buf, sizeof buf, "loop at %s:%d-%d", base, lo, hi);
	else if (lo > 0)
		snprintf(buf, sizeof buf, "loop at %s:%d", base, lo);
	else
		snprintf(buf, sizeof buf, "loop at %s", base);
	return cp_strpool_get(pool, buf);
}

/* ---- sample paths of a top-down tree ---- */

/* One procedure frame of a sample's path, innermost first. */
struct path_frame {
	const char *proc, *module;
	const char *file;     /* the procedure's own source file: where its outermost inlined
			       * frame was inlined, else the file of loc */
	const char *loc_file; /* where in this procedure the path goes on (statement or call) */
	int loc_line;
	size_t body_first, nbody; /* its loops around loc, innermost first (those of code
				   * inlined into it included) */
};

struct path {
	struct path_frame *fr;
	size_t nfr, fr_alloc;
	uint32_t *body; /* top-down loop nodes */
	size_t nbody, body_alloc;
};

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
			XGROW(p->fr, p->nfr + 1, p->fr_alloc);
			struct path_frame *f = &p->fr[p->nfr++];
			f->proc = x->name;
			f->module = x->module;
			f->file = file;
			f->loc_file = loc_file;
			f->loc_line = loc_line;
			f->body_first = body_first;
			f->nbody = p->nbody - body_first;
			body_first = p->nbody;
			file = loc_file = x->file;
			loc_line = x->line;
		}
	}
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

static int has_cost(const struct cp_view *v, uint32_t node)
{
	const double *e = cp_view_excl(v, node);
	for (size_t m = 0; m < v->nmetrics; m++)
		if (e[m] != 0)
			return 1;
	return 0;
}

/* Module > file > procedure > loops > line. Code inlined into a procedure is the
 * procedure's own: its loops and statements hang below the procedure (the inlined frames
 * show in the top-down view). Code without line information (no DWARF) has no file or line
 * level: its procedure hangs directly below the module. */
static void flat_path(struct cp_view *out, const struct cp_view *td, const struct path *p,
		      uint64_t stamp, const double *vals, struct cp_view_contribs *rec)
{
	struct cp_strpool *pool = out->pool;
	for (size_t j = 0; j < p->nfr; j++) {
		const struct path_frame *f = &p->fr[j];
		const char *mod = f->module ? f->module : cp_strpool_get(pool, "<unknown>");
		const char *file = f->file;
		int excl = j == 0;
		uint32_t m = cp_view_child(out, 0, CP_VK_MODULE, mod, f->module, NULL, 0);
		count_once(out, m, stamp, vals, excl, rec);
		uint32_t parent = m;
		if (file) {
			parent = cp_view_child(out, m, CP_VK_FILE, file, f->module, file, 0);
			count_once(out, parent, stamp, vals, excl, rec);
		}
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
		if (!f->loc_file)
			continue;
		/* keyed by file:line; the display name is made once, when the node is new */
		uint32_t l = cp_view_child(out, parent, CP_VK_LINE, NULL, f->module, f->loc_file,
					   f->loc_line);
		if (!out->nodes[l].name)
			out->nodes[l].name = cp_view_line_name(pool, f->loc_file, f->loc_line);
		count_once(out, l, stamp, vals, excl, rec);
	}
}

void cp_view_flat(const struct cp_view *td, struct cp_view *out)
{
	cp_view_flat_rec(td, out, NULL);
}

void cp_view_flat_rec(const struct cp_view *td, struct cp_view *out, struct cp_view_contribs *rec)
{
	struct path p;
	memset(&p, 0, sizeof p);
	cp_view_init(out, td->nmetrics, td->pool);
	/* the own cost of each node: what the top-down exclusive value holds for statements
	 * (frames' and loops' exclusive values are sums of their bodies) */
	for (uint32_t i = 1; i < td->n; i++) {
		uint32_t k = td->nodes[i].kind;
		if ((k != CP_VK_LINE && k != CP_VK_PROCEDURE) || !has_cost(td, i))
			continue;
		const double *vals = cp_view_excl(td, i);
		if (k == CP_VK_PROCEDURE) {
			/* a frame without statements (no line information) has its own cost:
			 * its exclusive value less that of its statements, inlined frames, loops */
			int has_body = 0;
			for (uint32_t c = td->nodes[i].first_child; c != UINT32_MAX;
			     c = td->nodes[c].next_sibling)
				has_body |= td->nodes[c].kind != CP_VK_PROCEDURE;
			if (has_body)
				continue;
		}
		path_collect(td, i, &p);
		flat_path(out, td, &p, i, vals, rec);
	}
	memcpy(cp_view_incl(out, 0), cp_view_incl(td, 0), td->nmetrics * sizeof(double));
	free(p.fr);
	free(p.body);
}
