/* `callpath view --html`: one self-contained HTML file (docs/cmd-view.md, "The
 * self-contained file"): the embedded front end with its scripts and style sheets inline,
 * and the profile's data as a JSON bundle: the three views' nodes (the largest first, up to
 * a budget), and the answers of the endpoints the front end cannot compute itself. */
#include "view/web.h"

#include "base/error.h"
#include "base/strbuf.h"
#include "base/xalloc.h"
#include "view/api-impl.h"
#include "view/assets.h"
#include "view/json.h"
#include "view/server-impl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_NODES 100000
#define MAX_SOURCES 200
#define MAX_THREAD_NODES 200
#define STATIC_CSP                                                                                 \
	"default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:"

/* ---- the views: best-first, so that the nodes kept are the largest ------------------- */

struct pending {
	double v;
	size_t json_off, json_len; /* the node's JSON in the scratch buffer */
	size_t parent_flag;	   /* offset of the parent's has_children value in out, or 0 */
	struct cp_web_node id;
	int has_children;
};

struct heap {
	struct pending *v;
	size_t n, alloc;
};

static int before(const struct pending *a, const struct pending *b)
{
	return a->v > b->v;
}

static void heap_push(struct heap *h, struct pending p)
{
	XGROW(h->v, h->n + 1, h->alloc);
	size_t i = h->n++;
	while (i && before(&p, &h->v[(i - 1) / 2])) {
		h->v[i] = h->v[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	h->v[i] = p;
}

static struct pending heap_pop(struct heap *h)
{
	struct pending top = h->v[0], last = h->v[--h->n];
	size_t i = 0;
	for (;;) {
		size_t k = 2 * i + 1;
		if (k >= h->n)
			break;
		if (k + 1 < h->n && before(&h->v[k + 1], &h->v[k]))
			k++;
		if (!before(&h->v[k], &last))
			break;
		h->v[i] = h->v[k];
		i = k;
	}
	if (h->n)
		h->v[i] = last;
	return top;
}

struct walk {
	struct cp_web_ctx *c;
	struct heap heap;
	struct strbuf scratch;
	size_t parent_flag;
};

/* Serializes a child into scratch with has_children false (set when a child is written). */
static int push_child(void *arg, struct cp_web_row *r)
{
	struct walk *w = arg;
	int had = r->has_children;
	r->has_children = 0;
	struct pending p = {.v = fabs(r->incl[0]),
			    .json_off = w->scratch.len,
			    .id = r->id,
			    .parent_flag = w->parent_flag,
			    .has_children = had};
	if (isnan(p.v))
		p.v = 0;
	cp_web_json_row(&w->scratch, w->c, r, 1);
	p.json_len = w->scratch.len - p.json_off;
	heap_push(&w->heap, p);
	return 0;
}

static const char flag_false[] = "\"has_children\":false";

static int view_nodes(struct cp_web_ctx *c, size_t budget, struct strbuf *out)
{
	struct walk w = {.c = c};
	strbuf_init(&w.scratch);
	struct cp_web_row root;
	struct cp_web_node r0 = {c->req->view, 0, 0, 0, 0};
	int rc = cp_web_node_get(c, &r0, &root), first = 1;
	if (!rc)
		rc = push_child(&w, &root);
	cp_web_row_release(&root);
	size_t n = 0;
	strbuf_addstr(out, "{\"nodes\":[");
	while (!rc && w.heap.n && n < budget) {
		struct pending p = heap_pop(&w.heap);
		if (!first)
			strbuf_addch(out, ',');
		first = 0;
		if (p.parent_flag)
			memcpy(out->buf + p.parent_flag, "true ", 5);
		const char *json = w.scratch.buf + p.json_off;
		const char *flag = strstr(json, flag_false);
		size_t at = out->len;
		strbuf_add(out, json, p.json_len);
		w.parent_flag = at + (size_t)(flag - json) + strlen("\"has_children\":");
		n++;
		if (p.has_children)
			rc = cp_web_children(c, &p.id, push_child, &w);
	}
	strbuf_addf(out, "],\"truncated\":%s}", w.heap.n ? "true" : "false");
	strbuf_release(&w.scratch);
	free(w.heap.v);
	return rc;
}

/* ---- the bundle --------------------------------------------------------------------------- */

/* The answer of path?query as JSON into out (a JSON string for non-JSON answers). */
static int answer(struct cp_web_server *s, const char *path, const char *query, struct strbuf *out)
{
	struct cp_web_req req;
	char err[512];
	cp_web_req_init(&req);
	int rc = cp_web_req_parse_query(&req, query, err, sizeof err);
	struct cp_web_resp resp;
	cp_web_resp_init(&resp);
	if (!rc)
		cp_web_api(&s->model, &s->api, path, &req, &resp);
	if (!rc && resp.status == 200) {
		if (strstr(resp.type, "json")) {
			while (resp.body.len && resp.body.buf[resp.body.len - 1] == '\n')
				resp.body.buf[--resp.body.len] = 0;
			strbuf_add(out, resp.body.buf, resp.body.len);
		} else {
			json_str(out, resp.body.buf);
		}
	} else {
		rc = -1;
	}
	cp_web_resp_release(&resp);
	cp_web_req_release(&req);
	return rc;
}

static void add_response(struct cp_web_server *s, const char *path, const char *query,
			 struct strbuf *b, int *first)
{
	size_t mark = b->len;
	strbuf_addstr(b, *first ? "" : ",");
	json_str(b, *query ? "" : path);
	if (*query) {
		b->len--; /* "path?query" */
		strbuf_addf(b, "%s?%s\"", path, query);
	}
	strbuf_addch(b, ':');
	if (answer(s, path, query, b)) {
		b->len = mark;
		b->buf[mark] = 0;
		return;
	}
	*first = 0;
}

/* File ids and top-down node ids named in the top-down view's JSON. */
static void collect_ids(const char *json, uint32_t *files, size_t *nfiles, char (*nodes)[24],
			size_t *nnodes)
{
	for (const char *p = json; (p = strstr(p, "{\"id\":\"")) && *nnodes < MAX_THREAD_NODES;) {
		p += 7;
		size_t n = strcspn(p, "\"");
		if (n < 24)
			snprintf(nodes[(*nnodes)++], 24, "%.*s", (int)n, p);
	}
	for (const char *p = json; (p = strstr(p, "\"file_id\":")) && *nfiles < MAX_SOURCES;) {
		p += 10;
		if (*p < '0' || *p > '9')
			continue;
		uint32_t f = (uint32_t)strtoul(p, NULL, 10);
		int seen = 0;
		for (size_t i = 0; i < *nfiles && !seen; i++)
			seen = files[i] == f;
		if (!seen)
			files[(*nfiles)++] = f;
	}
}

static int write_views(struct cp_web_server *s, size_t budget, struct strbuf *b, struct strbuf *td)
{
	static const char *const names[] = {"td", "bu", "flat"};
	strbuf_addstr(b, ",\"views\":{");
	int rc = 0;
	for (int v = 0; v < 3 && !rc; v++) {
		struct cp_web_req req;
		cp_web_req_init(&req);
		req.view = v;
		struct cp_web_ctx c;
		char err[256];
		if ((rc = cp_web_ctx_init(&c, &s->model, &req, err, sizeof err)))
			break;
		strbuf_addf(b, "%s\"%s\":", v ? "," : "", names[v]);
		size_t at = b->len;
		rc = view_nodes(&c, budget, b);
		if (v == 0)
			strbuf_add(td, b->buf + at, b->len - at);
		cp_web_ctx_release(&c);
	}
	strbuf_addch(b, '}');
	return rc;
}

static int build_bundle(struct cp_web_server *s, size_t budget, struct strbuf *b)
{
	struct strbuf td;
	strbuf_init(&td);
	strbuf_addstr(b, "{\"format\":\"callpath-view-bundle\",\"version\":1,\"info\":");
	int rc = answer(s, "/api/info", "", b);
	strbuf_addstr(b, ",\"metrics\":");
	if (!rc)
		rc = answer(s, "/api/metrics", "", b);
	if (!rc)
		rc = write_views(s, budget, b, &td);
	if (rc) {
		strbuf_release(&td);
		return rc < 0 ? cp_error(CP_EIO, "view --html: cannot read the profile") : rc;
	}
	uint32_t files[MAX_SOURCES];
	char(*nodes)[24] = xcalloc(MAX_THREAD_NODES, 24);
	size_t nfiles = 0, nnodes = 0;
	collect_ids(td.buf, files, &nfiles, nodes, &nnodes);
	strbuf_addstr(b, ",\"responses\":{");
	int first = 1;
	char q[64];
	add_response(s, "/api/callgraph", "", b, &first);
	add_response(s, "/api/threads", "", b, &first);
	add_response(s, "/api/sync", "", b, &first);
	for (size_t i = 0; i < nfiles; i++) {
		snprintf(q, sizeof q, "file=%u", files[i]);
		add_response(s, "/api/source", q, b, &first);
	}
	for (size_t i = 0; s->model.head.nprofiles > 1 && i < nnodes; i++) {
		snprintf(q, sizeof q, "node=%s", nodes[i]);
		if (!strchr(nodes[i], '.'))
			add_response(s, "/api/threads", q, b, &first);
	}
	strbuf_addstr(b, "}}");
	free(nodes);
	strbuf_release(&td);
	return 0;
}

/* ---- the HTML file ------------------------------------------------------------------------ */

/* Appends text with every "</" of a script or style written "<\/" (the element cannot end
 * early). */
static void add_inline(struct strbuf *out, const unsigned char *data, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		strbuf_addch(out, (char)data[i]);
		if (data[i] == '<' && i + 1 < len && data[i + 1] == '/')
			strbuf_addch(out, '\\');
	}
}

static int inline_ref(const char *p, const char *open, const char *close, struct strbuf *out,
		      const char *tag, size_t *used)
{
	size_t ol = strlen(open);
	if (strncmp(p, open, ol))
		return 0;
	const char *end = strstr(p + ol, close);
	if (!end || end - (p + ol) > 200)
		return 0;
	char name[256];
	snprintf(name, sizeof name, "%.*s", (int)(end - (p + ol)), p + ol);
	const struct cp_web_asset *a = cp_web_asset_find(name);
	if (!a)
		return 0;
	strbuf_addf(out, "<%s>", tag);
	add_inline(out, a->data, a->len);
	strbuf_addf(out, "</%s>", tag);
	*used = (size_t)(end - p) + strlen(close);
	return 1;
}

static void write_page(const char *index, const struct strbuf *bundle, struct strbuf *out)
{
	static const char marker[] = "<!--callpath:bundle-->";
	int placed = 0;
	for (const char *p = index; *p;) {
		size_t used = 0;
		if (inline_ref(p, "<script src=\"", "\"></script>", out, "script", &used) ||
		    inline_ref(p, "<link rel=\"stylesheet\" href=\"", "\">", out, "style", &used)) {
			p += used;
		} else if (!strncmp(p, "<head>", 6)) {
			strbuf_addstr(out, "<head><meta http-equiv=\"Content-Security-Policy\" "
					   "content=\"" STATIC_CSP "\">");
			p += 6;
		} else if (!strncmp(p, marker, sizeof marker - 1) ||
			   (!placed && !strncmp(p, "</body>", 7))) {
			strbuf_addstr(out,
				      "<script id=\"callpath-bundle\" type=\"application/json\">");
			for (size_t i = 0; i < bundle->len; i++)
				if (bundle->buf[i] == '<')
					strbuf_addstr(out, "\\u003c");
				else
					strbuf_addch(out, bundle->buf[i]);
			strbuf_addstr(out, "</script>");
			p += *p == '<' && p[1] == '!' ? sizeof marker - 1 : 0;
			placed = 1;
		} else {
			strbuf_addch(out, *p++);
		}
	}
}

int cp_web_write_html(const struct cp_web_options *o, FILE *out)
{
	struct cp_web_server s;
	memset(&s, 0, sizeof s);
	s.api.is_static = 1;
	int rc = cp_web_open_profile(&s, o);
	struct strbuf bundle, page;
	strbuf_init(&bundle);
	strbuf_init(&page);
	if (!rc)
		rc = build_bundle(&s, o->html_nodes ? o->html_nodes : DEFAULT_NODES, &bundle);
	const struct cp_web_asset *index = cp_web_asset_find("index.html");
	if (!rc && index) {
		char *text = xstrndup((const char *)index->data, index->len);
		write_page(text, &bundle, &page);
		free(text);
		if (fwrite(page.buf, 1, page.len, out) != page.len)
			rc = cp_error(CP_EIO, "view --html: write error");
	}
	strbuf_release(&bundle);
	strbuf_release(&page);
	cp_web_close_profile(&s);
	return rc;
}
