/* The endpoints that return trees: /api/flame and /api/sandwich. */
#include "view/api-impl.h"

#include "base/error.h"
#include "base/xalloc.h"
#include "db/query.h"
#include "view/json.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_TREE_NODES 20000
#define MAX_INSTANCES 2000

struct tree_opts {
	uint32_t metric;
	double cut;	/* leave out nodes below this value */
	uint32_t depth; /* 0 = all */
	size_t budget;	/* nodes left */
	int truncated;
};

static void tree_open(struct strbuf *b, const struct cp_web_row *r, uint32_t metric, int with_id)
{
	char id[32];
	strbuf_addch(b, '{');
	json_key(b, "name", 1);
	json_str(b, r->name);
	if (with_id) {
		cp_web_node_format(&r->id, id, sizeof id);
		json_kv_str(b, "id", id);
	}
	json_kv_str(b, "kind", r->kind);
	json_kv_str(b, "module", r->module);
	json_kv_id(b, "proc_id", r->proc_id);
	json_kv_num(b, "v", r->incl[metric]);
	json_kv_num(b, "self", r->excl[metric]);
	strbuf_addstr(b, ",\"children\":[");
}

/* The subtree of row r in the request's view, pruned by o. */
static int tree_write(struct cp_web_ctx *c, struct strbuf *b, const struct cp_web_row *r,
		      struct tree_opts *o, uint32_t depth)
{
	tree_open(b, r, o->metric, 1);
	int rc = 0;
	if (r->has_children && (!o->depth || depth < o->depth)) {
		struct cp_web_rows kids = {0};
		rc = cp_web_children(c, &r->id, cp_web_rows_add, &kids);
		cp_web_rows_sort(c, &kids);
		size_t shown = 0;
		for (size_t i = 0; i < kids.n && !rc; i++) {
			double v = kids.v[i].incl[o->metric];
			if (!(v > 0) || v < o->cut)
				continue;
			if (!o->budget) {
				o->truncated = 1;
				break;
			}
			o->budget--;
			if (shown++)
				strbuf_addch(b, ',');
			rc = tree_write(c, b, &kids.v[i], o, depth + 1);
		}
		cp_web_rows_release(&kids);
	}
	strbuf_addstr(b, "]}");
	return rc;
}

static void tree_opts_init(struct cp_web_ctx *c, struct tree_opts *o, double base)
{
	o->metric = c->req->metric;
	double min = c->req->min >= 0 ? c->req->min : 0.001;
	o->cut = min * fabs(base);
	o->depth = c->req->depth;
	o->budget = MAX_TREE_NODES;
	o->truncated = 0;
}

void cp_web_api_flame(struct cp_web_ctx *c, struct cp_web_resp *out)
{
	struct cp_web_req sorted = *c->req;
	sorted.sort = CP_WEB_SORT_INCL;
	sorted.sort_metric = c->req->metric;
	const struct cp_web_req *orig = c->req;
	c->req = &sorted;
	struct cp_web_node id =
	    orig->has_node ? orig->node : (struct cp_web_node){orig->view, 0, 0, 0, 0};
	struct cp_web_row r, root;
	struct cp_web_node r0 = {orig->view, 0, 0, 0, 0};
	int rc = cp_web_node_get(c, &id, &r);
	if (!rc && (rc = cp_web_node_get(c, &r0, &root)))
		cp_web_row_release(&r);
	if (rc) {
		cp_web_api_fail(out, rc);
		c->req = orig;
		return;
	}
	struct tree_opts o;
	tree_opts_init(c, &o, r.incl[c->req->metric]);
	struct strbuf *b = &out->body;
	strbuf_addf(b, "{\"metric\":%u,\"total\":", c->req->metric);
	json_num(b, root.incl[c->req->metric]);
	strbuf_addstr(b, ",\"root\":");
	rc = tree_write(c, b, &r, &o, 0);
	strbuf_addf(b, ",\"truncated\":%s}\n", o.truncated ? "true" : "false");
	if (rc)
		cp_web_api_fail(out, rc);
	cp_web_row_release(&r);
	cp_web_row_release(&root);
	c->req = orig;
}

/* ---- /api/sandwich ----------------------------------------------------------------------- */

/* A tree merged from several subtrees by (kind, name). */
struct mnode {
	struct cp_web_row row; /* name, kind, module; incl/excl summed */
	struct mnode *kids;
	size_t nkids, akids;
};

static void mnode_free(struct mnode *m)
{
	for (size_t i = 0; i < m->nkids; i++)
		mnode_free(&m->kids[i]);
	free(m->kids);
	cp_web_row_release(&m->row);
}

static struct mnode *mnode_child(struct mnode *m, const struct cp_web_row *r, size_t nm)
{
	for (size_t i = 0; i < m->nkids; i++) {
		struct mnode *k = &m->kids[i];
		if (!strcmp(k->row.kind, r->kind) && !strcmp(k->row.name, r->name)) {
			for (size_t j = 0; j < nm; j++) {
				k->row.incl[j] += r->incl[j];
				k->row.excl[j] += r->excl[j];
			}
			return k;
		}
	}
	XGROW(m->kids, m->nkids + 1, m->akids);
	struct mnode *k = &m->kids[m->nkids++];
	memset(k, 0, sizeof *k);
	k->row = *r;
	k->row.name = xstrdup(r->name ? r->name : "");
	k->row.module = r->module ? xstrdup(r->module) : NULL;
	k->row.file = k->row.procedure = NULL;
	return k;
}

/* Adds the children of the node id (to depth levels) into m. */
static int merge_children(struct cp_web_ctx *c, const struct cp_web_node *id, struct mnode *m,
			  uint32_t depth, size_t *budget)
{
	if (!depth || !*budget)
		return 0;
	struct cp_web_rows kids = {0};
	int rc = cp_web_children(c, id, cp_web_rows_add, &kids);
	for (size_t i = 0; i < kids.n && !rc && *budget; i++) {
		if (!(kids.v[i].incl[c->req->metric] > 0))
			continue;
		(*budget)--;
		struct mnode *k = mnode_child(m, &kids.v[i], c->ms.n);
		if (kids.v[i].has_children)
			rc = merge_children(c, &kids.v[i].id, k, depth - 1, budget);
	}
	cp_web_rows_release(&kids);
	return rc;
}

static void mnode_write(struct strbuf *b, struct mnode *m, struct tree_opts *o)
{
	tree_open(b, &m->row, o->metric, 0);
	size_t shown = 0;
	for (size_t i = 0; i < m->nkids; i++) {
		if (m->kids[i].row.incl[o->metric] < o->cut)
			continue;
		if (shown++)
			strbuf_addch(b, ',');
		mnode_write(b, &m->kids[i], o);
	}
	strbuf_addstr(b, "]}");
}

struct ids {
	struct cp_web_node *v;
	size_t n, alloc;
};

static int add_instance(void *arg, const struct cp_dbq_row *d)
{
	struct ids *l = arg;
	XGROW(l->v, l->n + 1, l->alloc);
	l->v[l->n++] = (struct cp_web_node){CP_WEB_TD, d->id, 0, 0, 0};
	return 0;
}

/* Frames of procedure proc in the top-down view that are not inside another frame of it
 * (recursion counted once). */
static int instances(struct cp_web_ctx *c, uint32_t proc, struct ids *out)
{
	struct ids all = {0};
	int rc = cp_dbq_scopes_of_procs(c->m->q, &proc, 1, 1u << CP_DBK_PROC | 1u << CP_DBK_INLINE,
					c->req->metric, MAX_INSTANCES, add_instance, &all);
	for (size_t i = 0; i < all.n && !rc; i++) {
		struct cp_web_row r;
		struct cp_web_node id = all.v[i];
		int nested = 0;
		if ((rc = cp_web_node_get(c, &id, &r)))
			break;
		while (r.has_parent && !nested) {
			id = r.parent;
			cp_web_row_release(&r);
			if ((rc = cp_web_node_get(c, &id, &r)))
				break;
			nested = r.proc_id == proc &&
				 (!strcmp(r.kind, "procedure") || !strcmp(r.kind, "inlined"));
		}
		cp_web_row_release(&r);
		if (!rc && !nested) {
			XGROW(out->v, out->n + 1, out->alloc);
			out->v[out->n++] = all.v[i];
		}
	}
	free(all.v);
	return rc;
}

/* The callers: the bottom-up subtree of the procedure (a child of the bottom-up root). */
static int callers_tree(struct cp_web_ctx *c, const char *name, struct mnode *top)
{
	struct cp_web_req bu = *c->req;
	bu.view = CP_WEB_BU;
	const struct cp_web_req *orig = c->req;
	c->req = &bu;
	struct cp_web_rows kids = {0};
	struct cp_web_node r0 = {CP_WEB_BU, 0, 0, 0, 0};
	int rc = cp_web_children(c, &r0, cp_web_rows_add, &kids);
	size_t budget = MAX_TREE_NODES;
	for (size_t i = 0; i < kids.n && !rc; i++)
		if (kids.v[i].name && !strcmp(kids.v[i].name, name) &&
		    !strcmp(kids.v[i].kind, "procedure"))
			rc = merge_children(c, &kids.v[i].id, top, orig->depth ? orig->depth : 64,
					    &budget);
	cp_web_rows_release(&kids);
	c->req = orig;
	return rc;
}

void cp_web_api_sandwich(struct cp_web_ctx *c, struct cp_web_resp *out)
{
	const struct cp_db *h = &c->m->head;
	uint32_t proc = c->req->proc;
	if (proc == CP_WEB_NONE || proc >= h->nprocs) {
		cp_web_resp_error(out, proc == CP_WEB_NONE ? 400 : 404, "proc: no procedure %u",
				  proc);
		return;
	}
	struct cp_web_req td = *c->req;
	td.view = CP_WEB_TD;
	const struct cp_web_req *orig = c->req;
	c->req = &td;
	struct ids inst = {0};
	struct mnode callees, callers;
	memset(&callees, 0, sizeof callees);
	memset(&callers, 0, sizeof callers);
	int rc = instances(c, proc, &inst);
	size_t budget = MAX_TREE_NODES;
	for (size_t i = 0; i < inst.n && !rc; i++) {
		struct cp_web_row r;
		if ((rc = cp_web_node_get(c, &inst.v[i], &r)))
			break;
		for (size_t m = 0; m < c->ms.n; m++) {
			callees.row.incl[m] += r.incl[m];
			callees.row.excl[m] += r.excl[m];
		}
		cp_web_row_release(&r);
		rc = merge_children(c, &inst.v[i], &callees, td.depth ? td.depth : 64, &budget);
	}
	if (!rc)
		rc = callers_tree(c, h->procs[proc].name, &callers);
	if (rc) {
		cp_web_api_fail(out, rc);
		goto done;
	}
	const char *module =
	    h->procs[proc].module < h->nmodules ? h->modules[h->procs[proc].module].path : NULL;
	for (struct mnode *t = &callees; t; t = t == &callees ? &callers : NULL) {
		t->row.name = xstrdup(h->procs[proc].name);
		t->row.module = module ? xstrdup(module) : NULL;
		t->row.kind = "procedure";
	}
	memcpy(callers.row.incl, callees.row.incl, sizeof callers.row.incl);
	memcpy(callers.row.excl, callees.row.excl, sizeof callers.row.excl);
	struct strbuf *b = &out->body;
	strbuf_addf(b, "{\"procedure\":{\"id\":%u", proc);
	json_kv_str(b, "name", h->procs[proc].name);
	json_kv_str(b, "module", module);
	strbuf_addstr(b, "},\"incl\":");
	cp_web_json_values(b, callees.row.incl, c->ms.n);
	strbuf_addstr(b, ",\"excl\":");
	cp_web_json_values(b, callees.row.excl, c->ms.n);
	struct tree_opts o;
	tree_opts_init(c, &o, callees.row.incl[c->req->metric]);
	strbuf_addstr(b, ",\"callers\":");
	mnode_write(b, &callers, &o);
	strbuf_addstr(b, ",\"callees\":");
	mnode_write(b, &callees, &o);
	strbuf_addstr(b, "}\n");
done:
	mnode_free(&callees);
	mnode_free(&callers);
	free(inst.v);
	c->req = orig;
}
