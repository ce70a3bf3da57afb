/* The endpoints of the API that list nodes: info, metrics, children, node, version. */
#include "view/api.h"

#include "base/error.h"
#include "base/xalloc.h"
#include "db/query.h"
#include "view/api-impl.h"
#include "view/json.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void cp_web_resp_init(struct cp_web_resp *r)
{
	r->status = 200;
	r->type = "application/json; charset=utf-8";
	strbuf_init(&r->body);
}

void cp_web_resp_release(struct cp_web_resp *r)
{
	strbuf_release(&r->body);
}

void cp_web_resp_error(struct cp_web_resp *r, int status, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	strbuf_clear(&r->body);
	r->status = status;
	r->type = "application/json; charset=utf-8";
	strbuf_addstr(&r->body, "{\"error\":");
	json_str(&r->body, msg);
	strbuf_addstr(&r->body, "}\n");
}

void cp_web_api_fail(struct cp_web_resp *out, int rc)
{
	if (rc == CP_WEB_LOADING) { /* docs/cmd-view.md: poll again after Retry-After */
		strbuf_clear(&out->body);
		out->status = 202;
		out->type = "application/json; charset=utf-8";
		strbuf_addstr(&out->body, "{\"loading\":true,\"retry_after\":1}\n");
		return;
	}
	int status = rc == CP_ENOENT ? 404 : rc == CP_EINVAL ? 400 : rc == CP_ENOTSUP ? 501 : 500;
	cp_web_resp_error(out, status, "%s", cp_error_message());
}

void cp_web_json_values(struct strbuf *b, const double *v, size_t n)
{
	strbuf_addch(b, '[');
	for (size_t i = 0; i < n; i++) {
		if (i)
			strbuf_addch(b, ',');
		json_num(b, v[i]);
	}
	strbuf_addch(b, ']');
}

void cp_web_json_row(struct strbuf *b, const struct cp_web_ctx *c, const struct cp_web_row *r,
		     int with_parent)
{
	char id[32];
	cp_web_node_format(&r->id, id, sizeof id);
	strbuf_addch(b, '{');
	json_key(b, "id", 1);
	json_str(b, id);
	if (with_parent) {
		cp_web_node_format(&r->parent, id, sizeof id);
		json_kv_str(b, "parent", r->has_parent ? id : NULL);
	}
	json_kv_str(b, "kind", r->kind);
	json_kv_str(b, "name", r->name);
	json_kv_str(b, "module", r->module);
	json_kv_str(b, "file", r->file);
	json_kv_id(b, "file_id", r->file_id);
	json_kv_num(b, "line", r->line);
	json_kv_num(b, "line_end", r->line_end);
	json_kv_id(b, "proc_id", r->proc_id);
	json_kv_str(b, "procedure", r->procedure);
	json_key(b, "has_children", 0);
	strbuf_addstr(b, r->has_children ? "true" : "false");
	json_key(b, "incl", 0);
	cp_web_json_values(b, r->incl, c->ms.n);
	json_key(b, "excl", 0);
	cp_web_json_values(b, r->excl, c->ms.n);
	strbuf_addch(b, '}');
}

/* ---- /api/info, /api/metrics, /api/version -------------------------------------------- */

static void strings_array(struct strbuf *b, const char *key, const char *const *s, size_t n)
{
	json_key(b, key, 0);
	strbuf_addch(b, '[');
	for (size_t i = 0; i < n; i++) {
		if (i)
			strbuf_addch(b, ',');
		json_str(b, s[i]);
	}
	strbuf_addch(b, ']');
}

static size_t count_ranks(const struct cp_db *h)
{
	size_t n = 0;
	for (size_t i = 0; i < h->nprofiles; i++) {
		int r = h->profiles[i].rank, seen = 0;
		for (size_t j = 0; j < i && !seen; j++)
			seen = h->profiles[j].rank == r;
		n += r >= 0 && !seen;
	}
	return n;
}

static void api_info(struct cp_web_model *m, const struct cp_web_api_state *st,
		     struct cp_web_resp *out)
{
	const struct cp_db *h = &m->head;
	struct strbuf *b = &out->body;
	static const char *const features[] = {"bu",	   "flat",	"source",  "flame",
					       "sandwich", "callgraph", "threads", "derived"};
	strbuf_addstr(b, "{\"api\":1");
	json_kv_str(b, "name", m->name);
	json_kv_str(b, "command", h->run.command);
	json_kv_str(b, "host", h->run.host);
	json_kv_num(b, "duration_s", h->run.duration_s);
	json_kv_num(b, "nscopes", (double)cp_dbq_nscopes(m->q));
	json_kv_num(b, "nprocedures", (double)h->nprocs);
	json_kv_num(b, "nprofiles", (double)h->nprofiles);
	json_kv_num(b, "nranks", (double)count_ranks(h));
	json_key(b, "live", 0);
	strbuf_addstr(b, st->live ? "true" : "false");
	json_kv_num(b, "generation", (double)m->generation);
	json_key(b, "static", 0);
	strbuf_addstr(b, st->is_static ? "true" : "false");
	strings_array(b, "features", features, sizeof features / sizeof features[0]);
	strings_array(b, "notes", h->run.notes, h->run.nnotes);
	strings_array(b, "warnings", h->run.warnings, h->run.nwarnings);
	strbuf_addstr(b, "}\n");
}

static void api_metrics(struct cp_web_ctx *c, struct cp_web_resp *out)
{
	const struct cp_db *h = &c->m->head;
	struct cp_web_row root;
	struct cp_web_node r0 = {c->req->view, 0, 0, 0, 0};
	int rc = cp_web_node_get(c, &r0, &root);
	if (rc) {
		cp_web_api_fail(out, rc);
		return;
	}
	struct strbuf *b = &out->body;
	strbuf_addstr(b, "{\"metrics\":[");
	for (size_t i = 0; i < c->ms.n; i++) {
		const struct cp_db_metric *dm = i < c->ms.ndb ? &h->metrics[i] : NULL;
		char name[160];
		const char *formula = dm ? dm->formula : strchr(c->ms.names[i], '=') + 1;
		snprintf(name, sizeof name, "%.*s", (int)strcspn(c->ms.names[i], "="),
			 c->ms.names[i]);
		strbuf_addstr(b, i ? ",{" : "{");
		json_key(b, "id", 1);
		strbuf_addf(b, "%zu", i);
		json_kv_str(b, "name", name);
		json_kv_str(b, "unit", dm ? dm->unit : "");
		json_kv_str(b, "kind", dm && dm->kind == CP_DB_METRIC_RAW ? "measured" : "derived");
		json_kv_str(b, "formula", formula);
		json_kv_str(b, "description", dm ? dm->description : NULL);
		json_kv_num(b, "samples", dm ? (double)dm->samples : 0);
		json_kv_num(b, "total", root.incl[i]);
		strbuf_addch(b, '}');
	}
	strbuf_addstr(b, "]}\n");
	cp_web_row_release(&root);
}

static void api_version(struct cp_web_model *m, const struct cp_web_api_state *st,
			struct cp_web_resp *out)
{
	strbuf_addf(&out->body, "{\"generation\":%llu,\"live\":%s}\n",
		    (unsigned long long)m->generation, st->live ? "true" : "false");
}

/* ---- /api/children, /api/node ---------------------------------------------------------- */

void cp_web_rows_release(struct cp_web_rows *l)
{
	for (size_t i = 0; i < l->n; i++)
		cp_web_row_release(&l->v[i]);
	free(l->v);
	memset(l, 0, sizeof *l);
}

int cp_web_rows_add(void *arg, struct cp_web_row *row)
{
	struct cp_web_rows *l = arg;
	if (l->n >= CP_WEB_MAX_ROWS)
		return cp_error(CP_EINVAL, "more than %d children", CP_WEB_MAX_ROWS);
	XGROW(l->v, l->n + 1, l->alloc);
	l->v[l->n++] = *row;
	memset(row, 0, sizeof *row); /* taken */
	return 0;
}

static const struct cp_web_req *sort_req;
static size_t sort_metric;

/* NaN last; then larger first; names ascending; ties by id for a stable order. */
static int row_cmp(const void *pa, const void *pb)
{
	const struct cp_web_row *a = pa, *b = pb;
	int c = 0;
	if (sort_req->sort == CP_WEB_SORT_NAME) {
		c = strcmp(a->name ? a->name : "", b->name ? b->name : "");
	} else {
		int ex = sort_req->sort == CP_WEB_SORT_EXCL;
		double x = ex ? a->excl[sort_metric] : a->incl[sort_metric];
		double y = ex ? b->excl[sort_metric] : b->incl[sort_metric];
		if (isnan(x) || isnan(y))
			c = isnan(x) - isnan(y);
		else
			c = x > y ? -1 : x < y;
	}
	if (!c)
		c = a->id.index < b->id.index ? -1 : a->id.index > b->id.index;
	if (!c)
		c = a->id.noline - b->id.noline;
	return c;
}

void cp_web_rows_sort(const struct cp_web_ctx *c, struct cp_web_rows *l)
{
	if (l->n < 2)
		return;
	sort_req = c->req;
	sort_metric = c->req->sort_metric;
	qsort(l->v, l->n, sizeof *l->v, row_cmp);
}

static void api_children(struct cp_web_ctx *c, struct cp_web_resp *out)
{
	const struct cp_web_req *req = c->req;
	struct cp_web_node id =
	    req->has_node ? req->node : (struct cp_web_node){req->view, 0, 0, 0, 0};
	if (req->sort != CP_WEB_SORT_NAME && req->sort_metric >= c->ms.n) {
		cp_web_resp_error(out, 400, "sort: no metric %u", req->sort_metric);
		return;
	}
	struct cp_web_row node, root;
	struct cp_web_rows l = {0};
	struct cp_web_node r0 = {req->view, 0, 0, 0, 0};
	int rc = cp_web_node_get(c, &id, &node);
	if (!rc && (rc = cp_web_node_get(c, &r0, &root)))
		cp_web_row_release(&node);
	if (rc) {
		cp_web_api_fail(out, rc);
		return;
	}
	size_t tm = req->sort == CP_WEB_SORT_NAME ? 0 : req->sort_metric;
	double cut = req->threshold / 100 * fabs(root.incl[tm < c->ms.n ? tm : 0]);
	size_t limit = req->limit ? (req->limit > 5000 ? 5000 : req->limit) : 500, shown = 0, k;
	size_t total = 0;
	rc = cp_web_children_top(c, &id, req->offset + limit, req->threshold > 0 ? cut : -1,
				 cp_web_rows_add, &l, &total);
	if (!rc)
		rc = cp_web_children(c, &id, cp_web_rows_add, &l);
	if (rc < 0) {
		cp_web_api_fail(out, rc);
		goto done;
	}
	if (!total)
		total = l.n;
	cp_web_rows_sort(c, &l);
	struct strbuf *b = &out->body;
	strbuf_addstr(b, "{\"node\":");
	cp_web_json_row(b, c, &node, 1);
	strbuf_addstr(b, ",\"children\":[");
	size_t passed = 0;
	for (k = 0; k < l.n && shown < limit; k++) {
		if (req->threshold > 0 && !(fabs(l.v[k].incl[tm < c->ms.n ? tm : 0]) >= cut))
			continue;
		if (passed++ < req->offset)
			continue;
		if (shown++)
			strbuf_addch(b, ',');
		cp_web_json_row(b, c, &l.v[k], 0);
	}
	strbuf_addf(b, "],\"total_children\":%zu,\"offset\":%zu,\"more\":%s}\n", total, req->offset,
		    (rc == 1 ? shown == limit && total > req->offset + limit : k < l.n) ? "true"
											: "false");
done:
	cp_web_rows_release(&l);
	cp_web_row_release(&node);
	cp_web_row_release(&root);
}

static void api_node(struct cp_web_ctx *c, struct cp_web_resp *out)
{
	struct cp_web_node id =
	    c->req->has_node ? c->req->node : (struct cp_web_node){c->req->view, 0, 0, 0, 0};
	struct cp_web_rows path = {0};
	struct cp_web_row r;
	int rc;
	for (int depth = 0; depth < 100000; depth++) {
		if ((rc = cp_web_node_get(c, &id, &r)))
			break;
		struct cp_web_node up = r.parent;
		int more = r.has_parent;
		cp_web_rows_add(&path, &r);
		if (!more)
			break;
		id = up;
	}
	if (rc) {
		cp_web_api_fail(out, rc);
		cp_web_rows_release(&path);
		return;
	}
	struct strbuf *b = &out->body;
	strbuf_addstr(b, "{\"node\":");
	cp_web_json_row(b, c, &path.v[0], 1);
	strbuf_addstr(b, ",\"path\":[");
	for (size_t i = path.n; i-- > 0;) {
		cp_web_json_row(b, c, &path.v[i], 1);
		if (i)
			strbuf_addch(b, ',');
	}
	strbuf_addstr(b, "]}\n");
	cp_web_rows_release(&path);
}

/* ---- dispatch ---------------------------------------------------------------------------- */

static const struct endpoint {
	const char *path;
	void (*fn)(struct cp_web_ctx *c, struct cp_web_resp *out);
} endpoints[] = {
    {"/api/metrics", api_metrics},
    {"/api/children", api_children},
    {"/api/node", api_node},
    {"/api/search", cp_web_api_search},
    {"/api/source", cp_web_api_source},
    {"/api/flame", cp_web_api_flame},
    {"/api/sandwich", cp_web_api_sandwich},
    {"/api/callgraph", cp_web_api_callgraph},
    {"/api/threads", cp_web_api_threads},
    {"/api/sync", cp_web_api_sync},
};

void cp_web_api(struct cp_web_model *m, const struct cp_web_api_state *st, const char *path,
		const struct cp_web_req *req, struct cp_web_resp *out)
{
	if (!strcmp(path, "/api/info")) {
		api_info(m, st, out);
		return;
	}
	if (!strcmp(path, "/api/version")) {
		api_version(m, st, out);
		return;
	}
	for (size_t i = 0; i < sizeof endpoints / sizeof endpoints[0]; i++) {
		if (strcmp(path, endpoints[i].path))
			continue;
		char err[512];
		struct cp_web_ctx c;
		if (cp_web_ctx_init(&c, m, req, err, sizeof err))
			cp_web_resp_error(out, 400, "%s", err);
		else if (req->metric >= c.ms.n)
			cp_web_resp_error(out, 400, "metric: no metric %u", req->metric);
		else {
			cp_dbq_hold(m->q,
				    1); /* one read transaction: one file lock, not one a query */
			endpoints[i].fn(&c, out);
			cp_dbq_hold(m->q, 0);
		}
		cp_web_ctx_release(&c);
		return;
	}
	cp_web_resp_error(out, 404, "no such endpoint");
}
