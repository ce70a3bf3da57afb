/* The view trees: creation, inclusive sums, and the bottom-up and flat views derived from a
 * top-down calling context tree. */
#include "report/view.h"

#include "base/xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *cp_vkind_name(enum cp_vkind k)
{
	static const char *const names[] = {"root",    "procedure", "inlined", "line",
					    "partial", "module",    "file",    "caller"};
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
	       (n->name == k->name || k->kind == CP_VK_LINE) &&
	       n->module == k->module && n->file == k->file && n->line == k->line;
}

static uint32_t node_new(struct cp_view *v, const struct child_key *k)
{
	if (v->n + 1 > v->alloc) {
		XGROW(v->nodes, v->n + 1, v->alloc);
		/* +8: a view of zero metrics still gets distinct, valid pointers */
		v->incl = xrealloc(v->incl, v->alloc * v->nmetrics * sizeof(uint64_t) + 8);
		v->excl = xrealloc(v->excl, v->alloc * v->nmetrics * sizeof(uint64_t) + 8);
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
	memset(cp_view_incl(v, i), 0, v->nmetrics * sizeof(uint64_t));
	memset(cp_view_excl(v, i), 0, v->nmetrics * sizeof(uint64_t));
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
	struct child_key root = {UINT32_MAX, CP_VK_ROOT, cp_strpool_get(pool, "<total>"), NULL,
				 NULL, 0};
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

void cp_view_add_excl(struct cp_view *v, uint32_t node, const uint64_t *vals)
{
	uint64_t *e = cp_view_excl(v, node);
	for (size_t m = 0; m < v->nmetrics; m++)
		e[m] += vals[m];
}

void cp_view_sum_inclusive(struct cp_view *v)
{
	memcpy(v->incl, v->excl, v->n * v->nmetrics * sizeof(uint64_t));
	/* Children always have larger indices than their parents. */
	for (size_t i = v->n; i-- > 1;) {
		uint64_t *pi = cp_view_incl(v, v->nodes[i].parent), *ci = cp_view_incl(v, (uint32_t)i);
		for (size_t m = 0; m < v->nmetrics; m++)
			pi[m] += ci[m];
	}
	/* A frame's exclusive value is the cost of its own statements (inlined code included):
	 * add each statement's cost to its inlined frames and its procedure frame. */
	for (size_t i = 1; i < v->n; i++) {
		if (v->nodes[i].kind != CP_VK_LINE)
			continue;
		const uint64_t *e = cp_view_excl(v, (uint32_t)i);
		for (uint32_t a = v->nodes[i].parent; a != UINT32_MAX; a = v->nodes[a].parent) {
			uint32_t k = v->nodes[a].kind;
			if (k != CP_VK_INLINED && k != CP_VK_PROCEDURE)
				break;
			uint64_t *ae = cp_view_excl(v, a);
			for (size_t m = 0; m < v->nmetrics; m++)
				ae[m] += e[m];
			if (k == CP_VK_PROCEDURE)
				break;
		}
	}
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

/* ---- sample paths of a top-down tree ---- */

/* One procedure frame of a sample's path, innermost first. */
struct path_frame {
	const char *proc, *module;
	const char *loc_file; /* where in this procedure the path goes on (statement or call) */
	int loc_line;
	const char *cs_file; /* the call site of this procedure in its caller */
	int cs_line;
};

/* Collects the procedure frames from node up to the root; returns how many. */
static size_t path_collect(const struct cp_view *td, uint32_t node, struct path_frame **fr,
			   size_t *alloc)
{
	size_t n = 0;
	const struct cp_vnode *x = &td->nodes[node];
	const char *loc_file = x->file;
	int loc_line = x->line;
	if (x->kind != CP_VK_LINE)
		loc_file = NULL, loc_line = 0;
	for (uint32_t i = node; i != UINT32_MAX; i = td->nodes[i].parent) {
		x = &td->nodes[i];
		if (x->kind == CP_VK_INLINED) {
			loc_file = x->file;
			loc_line = x->line;
		} else if (x->kind == CP_VK_PROCEDURE) {
			XGROW(*fr, n + 1, *alloc);
			struct path_frame *f = &(*fr)[n++];
			f->proc = x->name;
			f->module = x->module;
			f->loc_file = loc_file;
			f->loc_line = loc_line;
			f->cs_file = x->file;
			f->cs_line = x->line;
			loc_file = x->file;
			loc_line = x->line;
		}
	}
	return n;
}

/* Adds vals once per sample (stamp) to the inclusive, and if excl to the exclusive, values. */
static void count_once(struct cp_view *v, uint32_t node, uint64_t stamp, const uint64_t *vals,
		       int excl)
{
	if (v->nodes[node].stamp == stamp)
		return;
	v->nodes[node].stamp = stamp;
	uint64_t *in = cp_view_incl(v, node), *ex = cp_view_excl(v, node);
	for (size_t m = 0; m < v->nmetrics; m++) {
		in[m] += vals[m];
		if (excl)
			ex[m] += vals[m];
	}
}

static int has_cost(const struct cp_view *v, uint32_t node)
{
	const uint64_t *e = cp_view_excl(v, node);
	for (size_t m = 0; m < v->nmetrics; m++)
		if (e[m])
			return 1;
	return 0;
}

/* Module > file > procedure > line. Code without line information (no DWARF) has no file
 * or line level: its procedure hangs directly below the module. */
static void flat_path(struct cp_view *out, const struct path_frame *fr, size_t n, uint64_t stamp,
		      const uint64_t *vals)
{
	struct cp_strpool *pool = out->pool;
	for (size_t j = 0; j < n; j++) {
		const char *mod = fr[j].module ? fr[j].module : cp_strpool_get(pool, "<unknown>");
		const char *file = fr[j].loc_file;
		int excl = j == 0;
		uint32_t m = cp_view_child(out, 0, CP_VK_MODULE, mod, fr[j].module, NULL, 0);
		count_once(out, m, stamp, vals, excl);
		uint32_t parent = m;
		if (file) {
			parent = cp_view_child(out, m, CP_VK_FILE, file, fr[j].module, file, 0);
			count_once(out, parent, stamp, vals, excl);
		}
		uint32_t p = cp_view_child(out, parent, CP_VK_PROCEDURE, fr[j].proc, fr[j].module,
					   file, 0);
		count_once(out, p, stamp, vals, excl);
		if (!file)
			continue;
		/* keyed by file:line; the display name is made once, when the node is new */
		uint32_t l = cp_view_child(out, p, CP_VK_LINE, NULL, fr[j].module, file,
					   fr[j].loc_line);
		if (!out->nodes[l].name)
			out->nodes[l].name = cp_view_line_name(pool, file, fr[j].loc_line);
		count_once(out, l, stamp, vals, excl);
	}
}

void cp_view_flat(const struct cp_view *td, struct cp_view *out)
{
	struct path_frame *fr = NULL;
	size_t alloc = 0;
	cp_view_init(out, td->nmetrics, td->pool);
	for (uint32_t i = 1; i < td->n; i++) {
		if (td->nodes[i].kind != CP_VK_LINE || !has_cost(td, i))
			continue;
		const uint64_t *vals = cp_view_excl(td, i);
		size_t n = path_collect(td, i, &fr, &alloc);
		flat_path(out, fr, n, i, vals);
	}
	memcpy(cp_view_incl(out, 0), cp_view_incl(td, 0), td->nmetrics * sizeof(uint64_t));
	free(fr);
}

