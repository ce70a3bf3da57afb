/* The endpoints /api/search, /api/source and /api/threads. */
#include "view/api-impl.h"

#include "base/error.h"
#include "base/xalloc.h"
#include "db/expr.h"
#include "db/query.h"
#include "report/profile.h"
#include "view/json.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_SOURCE (16u << 20)
#define MAX_SOURCE_LINES 200000
#define MAX_SEARCH_PROCS 20000

/* ---- /api/search ---------------------------------------------------------------------- */

static int compile_regex(const char *q, regex_t *re, char *err, size_t errlen)
{
	if (!q || !*q || strlen(q) > 256) {
		snprintf(err, errlen, "q: a regular expression of 1 to 256 characters expected");
		return -1;
	}
	for (const char *p = q; *p; p++)
		if (*p == '\\' && p[1] >= '1' && p[1] <= '9') {
			snprintf(err, errlen, "q: back-references are not allowed");
			return -1;
		}
	int rc = regcomp(re, q, REG_EXTENDED | REG_ICASE | REG_NOSUB);
	if (rc) {
		char msg[200];
		regerror(rc, re, msg, sizeof msg);
		snprintf(err, errlen, "q: bad regular expression: %s", msg);
		return -1;
	}
	return 0;
}

struct match {
	struct cp_web_node id;
	double v;
};

static int match_cmp(const void *a, const void *b)
{
	const struct match *x = a, *y = b;
	if (x->v != y->v)
		return x->v > y->v ? -1 : 1;
	return (x->id.index > y->id.index) - (x->id.index < y->id.index);
}

struct matches {
	struct match *v;
	size_t n, alloc;
};

static int add_match(void *arg, const struct cp_dbq_row *d)
{
	struct matches *m = arg;
	XGROW(m->v, m->n + 1, m->alloc);
	m->v[m->n++] = (struct match){{CP_WEB_TD, d->id, 0, 0, 0}, d->stats[1].sum};
	return 0;
}

/* Lazy top-down: procedure and inlined frames of the matching procedures. */
static int search_lazy(struct cp_web_ctx *c, regex_t *re, size_t limit, struct matches *out)
{
	const struct cp_db *h = &c->m->head;
	uint32_t *procs = xmalloc((h->nprocs + 1) * sizeof *procs);
	size_t n = 0;
	for (size_t i = 0; i < h->nprocs && n < MAX_SEARCH_PROCS; i++)
		if (!regexec(re, h->procs[i].name, 0, NULL, 0))
			procs[n++] = (uint32_t)i;
	int rc = cp_dbq_scopes_of_procs(c->m->q, procs, n, 1u << CP_DBK_PROC | 1u << CP_DBK_INLINE,
					0, limit + 1, add_match, out);
	free(procs);
	return rc;
}

/* Any other view: every node of it. */
struct scan {
	regex_t *re;
	struct matches *out;
	struct cp_web_ctx *c;
	int rc;
};

static int scan_node(struct cp_web_ctx *c, const struct cp_web_node *id, struct scan *s, int depth)
{
	struct cp_web_rows kids = {0};
	int rc = cp_web_children(c, id, cp_web_rows_add, &kids);
	for (size_t i = 0; i < kids.n && !rc; i++) {
		struct cp_web_row *r = &kids.v[i];
		if (r->name && !regexec(s->re, r->name, 0, NULL, 0)) {
			XGROW(s->out->v, s->out->n + 1, s->out->alloc);
			s->out->v[s->out->n++] = (struct match){r->id, r->incl[0]};
		}
		/* bottom-up: only the procedures at the top (their callers repeat them); flat read
		 * from the database: modules, files and procedures (not the bodies of every
		 * procedure's frames) */
		int below = !(cp_web_flat_lazy(c) && !strcmp(r->kind, "procedure"));
		if (r->has_children && c->req->view != CP_WEB_BU && below && depth < 10000)
			rc = scan_node(c, &r->id, s, depth + 1);
	}
	cp_web_rows_release(&kids);
	return rc;
}

static void write_path(struct cp_web_ctx *c, struct strbuf *b, struct cp_web_node id)
{
	char buf[32];
	struct cp_web_node up[4096];
	size_t n = 0;
	struct cp_web_row r;
	while (n < 4096 && !cp_web_node_get(c, &id, &r)) {
		up[n++] = id;
		int more = r.has_parent;
		id = r.parent;
		cp_web_row_release(&r);
		if (!more)
			break;
	}
	strbuf_addch(b, '[');
	for (size_t i = n; i-- > 0;) {
		cp_web_node_format(&up[i], buf, sizeof buf);
		json_str(b, buf);
		if (i)
			strbuf_addch(b, ',');
	}
	strbuf_addch(b, ']');
}

void cp_web_api_search(struct cp_web_ctx *c, struct cp_web_resp *out)
{
	char err[300];
	regex_t re;
	if (compile_regex(c->req->q, &re, err, sizeof err)) {
		cp_web_resp_error(out, 400, "%s", err);
		return;
	}
	size_t limit = c->req->limit ? (c->req->limit > 500 ? 500 : c->req->limit) : 50;
	struct matches m = {0};
	int rc;
	if (!cp_web_needs_full(c->req)) {
		rc = search_lazy(c, &re, limit, &m);
	} else {
		struct scan s = {&re, &m, c, 0};
		struct cp_web_node root = {c->req->view, 0, 0, 0, 0};
		rc = scan_node(c, &root, &s, 0);
	}
	regfree(&re);
	if (rc) {
		cp_web_api_fail(out, rc);
		free(m.v);
		return;
	}
	if (m.n > 1)
		qsort(m.v, m.n, sizeof *m.v, match_cmp);
	struct strbuf *b = &out->body;
	strbuf_addstr(b, "{\"matches\":[");
	for (size_t i = 0; i < m.n && i < limit; i++) {
		struct cp_web_row r;
		if (cp_web_node_get(c, &m.v[i].id, &r))
			continue;
		char id[32];
		cp_web_node_format(&r.id, id, sizeof id);
		strbuf_addstr(b, i ? ",{" : "{");
		json_key(b, "id", 1);
		json_str(b, id);
		json_kv_str(b, "name", r.name);
		json_kv_str(b, "kind", r.kind);
		json_key(b, "path", 0);
		write_path(c, b, r.id);
		strbuf_addch(b, '}');
		cp_web_row_release(&r);
	}
	strbuf_addf(b, "],\"truncated\":%s}\n", m.n > limit ? "true" : "false");
	free(m.v);
}

/* ---- /api/source ---------------------------------------------------------------------- */

struct line_cost {
	uint32_t line;
	double v[CP_DB_MAX_METRICS + CP_WEB_MAX_DERIVED];
};

struct source {
	struct cp_web_ctx *c;
	struct line_cost *costs;
	size_t ncosts, alloc;
	uint32_t (*loops)[2];
	size_t nloops, aloops;
	uint32_t *inlined;
	size_t ninlined, ainlined;
	uint32_t (*pending)[2]; /* (line, parent loop) of statements in loops: inlined? */
	size_t npending, apending;
};

static struct line_cost *cost_at(struct source *s, uint32_t line)
{
	for (size_t i = s->ncosts; i-- > 0;)
		if (s->costs[i].line == line)
			return &s->costs[i];
	XGROW(s->costs, s->ncosts + 1, s->alloc);
	struct line_cost *lc = &s->costs[s->ncosts++];
	memset(lc, 0, sizeof *lc);
	lc->line = line;
	return lc;
}

static void add_loop(struct source *s, uint32_t lo, uint32_t hi)
{
	for (size_t i = 0; i < s->nloops; i++)
		if (s->loops[i][0] == lo && s->loops[i][1] == hi)
			return;
	XGROW(s->loops, s->nloops + 1, s->aloops);
	s->loops[s->nloops][0] = lo;
	s->loops[s->nloops++][1] = hi;
}

static void add_inlined(struct source *s, uint32_t line)
{
	for (size_t i = 0; i < s->ninlined; i++)
		if (s->inlined[i] == line)
			return;
	XGROW(s->inlined, s->ninlined + 1, s->ainlined);
	s->inlined[s->ninlined++] = line;
}

static int source_row(void *arg, const struct cp_dbq_row *d)
{
	struct source *s = arg;
	if (d->s.kind == CP_DBK_LOOP) {
		add_loop(s, d->s.line_lo ? d->s.line_lo : d->s.line, d->s.line_hi);
		return 0;
	}
	if (!d->s.line)
		return 0;
	struct line_cost *lc = cost_at(s, d->s.line);
	for (size_t m = 0; m < s->c->ms.ndb; m++)
		if (s->c->m->head.metrics[m].kind == CP_DB_METRIC_RAW &&
		    !isnan(d->stats[m * 2].sum))
			lc->v[m] += d->stats[m * 2].sum;
	if (d->parent_kind == CP_DBK_INLINE) {
		add_inlined(s, d->s.line);
	} else if (d->parent_kind == CP_DBK_LOOP && s->npending < 1000) {
		XGROW(s->pending, s->npending + 1, s->apending);
		s->pending[s->npending][0] = d->s.line;
		s->pending[s->npending++][1] = d->s.parent;
	}
	return 0;
}

static int frame_kind(void *arg, const struct cp_dbq_row *d)
{
	struct cp_db_scope *out = arg;
	*out = d->s;
	return 0;
}

/* Statements in loops: inlined code when the loop's enclosing frame is an inlined one. */
static void resolve_pending(struct cp_web_ctx *c, struct source *s)
{
	for (size_t i = 0; i < s->npending; i++) {
		struct cp_db_scope sc = {.parent = s->pending[i][1], .kind = CP_DBK_LOOP};
		for (int up = 0; up < 64 && sc.kind == CP_DBK_LOOP && sc.parent != CP_DB_NONE; up++)
			if (cp_dbq_scope(c->m->q, sc.parent, frame_kind, &sc))
				break;
		if (sc.kind == CP_DBK_INLINE)
			add_inlined(s, s->pending[i][0]);
	}
	cp_error_clear();
}

/* The selection's statements from the in-memory top-down view. */
static int source_full(struct cp_web_ctx *c, uint32_t file, struct source *s)
{
	const struct cp_profile *p = cp_web_full_profile(c);
	if (!p)
		return c->full_rc;
	const char *path = c->m->head.files[file].path;
	const struct cp_view *v = &p->td;
	for (uint32_t i = 1; i < v->n; i++) {
		const struct cp_vnode *n = &v->nodes[i];
		if (!n->file || strcmp(n->file, path))
			continue;
		if (n->kind == CP_VK_LOOP) {
			add_loop(s, (uint32_t)n->line, (uint32_t)n->line_end);
		} else if (n->kind == CP_VK_LINE && n->line > 0) {
			struct line_cost *lc = cost_at(s, (uint32_t)n->line);
			for (size_t m = 0; m < c->ms.ndb && m < v->nmetrics; m++)
				if (c->m->head.metrics[m].kind == CP_DB_METRIC_RAW)
					lc->v[m] += cp_view_excl(v, i)[m];
			uint32_t up = n->parent;
			while (up && v->nodes[up].kind == CP_VK_LOOP)
				up = v->nodes[up].parent;
			if (v->nodes[up].kind == CP_VK_INLINED)
				add_inlined(s, (uint32_t)n->line);
		}
	}
	return 0;
}

/* Reads path (a regular file, at most MAX_SOURCE bytes); NULL + reason. */
static char *read_source(const char *path, size_t *len, char *why, size_t whylen)
{
	if (path[0] != '/') {
		snprintf(why, whylen,
			 "%s: a relative path (the compilation directory is not known)", path);
		return NULL;
	}
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	struct stat st;
	char *buf = NULL;
	if (fd < 0) {
		snprintf(why, whylen, "cannot open %s: %s", path, strerror(errno));
		return NULL;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode))
		snprintf(why, whylen, "%s is not a regular file", path);
	else if (st.st_size > (off_t)MAX_SOURCE)
		snprintf(why, whylen, "%s is larger than 16 MB", path);
	else
		buf = xmalloc((size_t)st.st_size + 1);
	size_t got = 0;
	while (buf && got < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + got, (size_t)st.st_size - got);
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	if (buf) {
		buf[got] = 0;
		*len = got;
	}
	return buf;
}

static void write_lines(struct strbuf *b, const char *text, size_t len)
{
	strbuf_addstr(b, ",\"lines\":[");
	size_t n = 0;
	for (const char *p = text; p < text + len && n < MAX_SOURCE_LINES; n++) {
		const char *nl = memchr(p, '\n', (size_t)(text + len - p));
		size_t ll = nl ? (size_t)(nl - p) : (size_t)(text + len - p);
		char *line = xstrndup(p, ll); /* a NUL ends the line's text */
		if (n)
			strbuf_addch(b, ',');
		json_str(b, line);
		free(line);
		p += ll + 1;
	}
	strbuf_addch(b, ']');
}

static void write_costs(struct cp_web_ctx *c, struct source *s, struct strbuf *b)
{
	strbuf_addstr(b, ",\"costs\":{");
	for (size_t i = 0; i < s->ncosts; i++) {
		struct line_cost *lc = &s->costs[i];
		for (size_t m = 0; m < c->ms.ndb; m++)
			if (c->m->formulas[m])
				lc->v[m] = cp_expr_eval(c->m->formulas[m], lc->v);
		for (size_t m = c->ms.ndb; m < c->ms.n; m++)
			lc->v[m] = cp_expr_eval(c->ms.exprs[m], lc->v);
		strbuf_addf(b, "%s\"%u\":[", i ? "," : "", lc->line);
		for (size_t m = 0; m < c->ms.n; m++) {
			if (m)
				strbuf_addch(b, ',');
			json_num(b, lc->v[m]);
		}
		strbuf_addch(b, ']');
	}
	strbuf_addstr(b, "},\"loops\":[");
	for (size_t i = 0; i < s->nloops; i++)
		strbuf_addf(b, "%s{\"line\":%u,\"line_end\":%u}", i ? "," : "", s->loops[i][0],
			    s->loops[i][1]);
	strbuf_addstr(b, "],\"inlined\":[");
	for (size_t i = 0; i < s->ninlined; i++)
		strbuf_addf(b, "%s%u", i ? "," : "", s->inlined[i]);
	strbuf_addch(b, ']');
}

void cp_web_api_source(struct cp_web_ctx *c, struct cp_web_resp *out)
{
	uint32_t file = c->req->file;
	if (file == CP_WEB_NONE) {
		cp_web_resp_error(out, 400, "file: a file id is needed");
		return;
	}
	if (file >= c->m->head.nfiles) {
		cp_web_resp_error(out, 404, "no file %u in the database", file);
		return;
	}
	struct source s = {.c = c};
	struct cp_web_req sel = *c->req;
	sel.view = CP_WEB_TD;
	const struct cp_web_req *orig = c->req;
	c->req = &sel;
	int rc = cp_web_needs_full(&sel)
		     ? source_full(c, file, &s)
		     : cp_dbq_scopes_of_file(c->m->q, file, 1u << CP_DBK_STMT | 1u << CP_DBK_LOOP,
					     source_row, &s);
	c->req = orig;
	if (rc) {
		cp_web_api_fail(out, rc);
		goto done;
	}
	resolve_pending(c, &s);
	const char *path = c->m->head.files[file].path;
	char why[600] = "";
	size_t len = 0;
	char *text = read_source(path, &len, why, sizeof why);
	struct strbuf *b = &out->body;
	strbuf_addf(b, "{\"file\":{\"id\":%u", file);
	json_kv_str(b, "path", path);
	strbuf_addf(b, "},\"available\":%s", text ? "true" : "false");
	json_kv_str(b, "reason", text ? NULL : why);
	if (text)
		write_lines(b, text, len);
	else
		strbuf_addstr(b, ",\"lines\":[]");
	write_costs(c, &s, b);
	strbuf_addstr(b, "}\n");
	free(text);
done:
	free(s.costs);
	free(s.loops);
	free(s.inlined);
	free(s.pending);
}

/* ---- /api/threads ----------------------------------------------------------------------- */

static void write_profiles(const struct cp_db *h, struct strbuf *b)
{
	strbuf_addstr(b, "{\"profiles\":[");
	for (size_t i = 0; i < h->nprofiles; i++) {
		const struct cp_db_profile *p = &h->profiles[i];
		strbuf_addf(b, "%s{\"id\":%zu,\"pid\":%d,\"tid\":%d,\"tidx\":%u,\"rank\":%d",
			    i ? "," : "", i, p->pid, p->tid, p->tidx, p->rank);
		json_kv_str(b, "host", p->host);
		json_kv_str(b, "thread_name", p->thread_name);
		strbuf_addch(b, '}');
	}
	strbuf_addch(b, ']');
}

/* Marks the scopes of the subtree of root (incl) and those of its own code (excl: not
 * entering procedure frames below root). */
static void mark_subtree(const struct cp_db *db, uint32_t root, uint8_t *mark)
{
	uint32_t *stack = xmalloc((db->nscopes + 1) * sizeof *stack);
	size_t n = 0;
	stack[n++] = root;
	mark[root] = 3;
	while (n) {
		uint32_t s = stack[--n];
		for (uint32_t k = db->scopes[s].first_child; k != CP_DB_NONE;
		     k = db->scopes[k].next_sibling) {
			int own = (mark[s] & 2) && db->scopes[k].kind != CP_DBK_PROC;
			mark[k] = (uint8_t)(1 | (own ? 2 : 0));
			stack[n++] = k;
		}
	}
	free(stack);
}

struct tval {
	uint32_t profile;
	double incl, excl;
};

static int tval_cmp(const void *a, const void *b)
{
	const struct tval *x = a, *y = b;
	if (x->incl != y->incl)
		return x->incl > y->incl ? -1 : 1;
	return (x->profile > y->profile) - (x->profile < y->profile);
}

static void write_stat(struct strbuf *b, const char *key, const struct tval *v, size_t n, int ex,
		       int first)
{
	double sum = 0, sq = 0, mn = 0, mx = 0;
	uint32_t count = 0, argmax = CP_WEB_NONE;
	for (size_t i = 0; i < n; i++) {
		double x = ex ? v[i].excl : v[i].incl;
		if (x == 0 || isnan(x))
			continue;
		if (!count || x < mn)
			mn = x;
		if (!count || x > mx)
			mx = x, argmax = v[i].profile;
		count++, sum += x, sq += x * x;
	}
	double mean = count ? sum / count : 0, var = count ? sq / count - mean * mean : 0;
	json_key(b, key, first);
	strbuf_addch(b, '{');
	json_key(b, "sum", 1);
	json_num(b, sum);
	json_kv_num(b, "mean", mean);
	json_kv_num(b, "min", mn);
	json_kv_num(b, "max", mx);
	json_kv_num(b, "stddev", var > 0 ? sqrt(var) : 0);
	json_kv_id(b, "argmax", argmax);
	json_kv_num(b, "count", count);
	strbuf_addch(b, '}');
}

/* Profile pr's value of the request's metric from its raw values in[0..nraw) (and ex):
 * the derived metrics evaluated into in[nraw..] (and ex). */
static struct tval tval_of(const struct cp_web_ctx *c, size_t nraw, uint32_t pr, double *in,
			   double *ex)
{
	for (size_t m = nraw; m < c->ms.n; m++) {
		struct cp_expr *e = m < c->ms.ndb ? c->m->formulas[m] : c->ms.exprs[m];
		in[m] = e ? cp_expr_eval(e, in) : NAN;
		ex[m] = e ? cp_expr_eval(e, ex) : NAN;
	}
	return (struct tval){pr, in[c->req->metric], ex[c->req->metric]};
}

/* Per-profile inclusive and exclusive values of metric of the top-down scope `scope`. */
static void thread_values(struct cp_web_ctx *c, const struct cp_profile *p, uint32_t scope,
			  struct tval *tv)
{
	const struct cp_db *db = &p->db;
	size_t nraw = cp_db_nraw(db), nm = c->ms.n;
	uint8_t *mark = xcalloc(db->nscopes + 1, 1);
	mark_subtree(db, scope, mark);
	double *in = xcalloc(nm + 1, sizeof *in), *ex = xcalloc(nm + 1, sizeof *ex);
	for (uint32_t pr = 0; pr < db->nprofiles; pr++) {
		memset(in, 0, nm * sizeof *in);
		memset(ex, 0, nm * sizeof *ex);
		const struct cp_db_pvalues *pv = &db->pvalues[pr];
		for (size_t k = 0; k < pv->n; k++) {
			const struct cp_db_value *x = &pv->v[k];
			if (x->scope >= db->nscopes || x->metric >= nraw || !mark[x->scope])
				continue;
			in[x->metric] += x->value;
			if (mark[x->scope] & 2)
				ex[x->metric] += x->value;
		}
		tv[pr] = tval_of(c, nraw, pr, in, ex);
	}
	free(in);
	free(ex);
	free(mark);
}

/* tv[0..np) from each profile's raw values rin/rex (np * nraw each, profile-major). */
static void raw_tvals(const struct cp_web_ctx *c, const double *rin, const double *rex, size_t np,
		      struct tval *tv)
{
	size_t nraw = cp_db_nraw(&c->m->head), nm = c->ms.n;
	double *in = xcalloc(nm + 1, sizeof *in), *ex = xcalloc(nm + 1, sizeof *ex);
	for (uint32_t pr = 0; pr < np; pr++) {
		memcpy(in, rin + pr * nraw, nraw * sizeof *in);
		memcpy(ex, rex + pr * nraw, nraw * sizeof *ex);
		tv[pr] = tval_of(c, nraw, pr, in, ex);
	}
	free(in);
	free(ex);
}

/* Per-profile values of metric of the bottom-up or flat row id (the whole profile's, or
 * with lazy: the database's per-thread tables'; then 0 means "not there"). */
static int row_values(struct cp_web_ctx *c, const struct cp_web_node *id, size_t np,
		      struct tval *tv, int lazy)
{
	size_t nraw = cp_db_nraw(&c->m->head);
	double *rin = xcalloc(np * nraw + 1, sizeof *rin),
	       *rex = xcalloc(np * nraw + 1, sizeof *rex);
	int rc =
	    lazy ? cp_web_threads_lazy(c, id, rin, rex) : cp_web_full_row_threads(c, id, rin, rex);
	if (rc == (lazy ? 1 : 0))
		raw_tvals(c, rin, rex, np, tv);
	free(rin);
	free(rex);
	return rc;
}

/* Per-profile values of metric of node id from the whole profile (c->req: all threads). */
static int full_values(struct cp_web_ctx *c, const struct cp_web_node *id, size_t n,
		       struct tval *tv)
{
	struct cp_web_req all = *c->req;
	const struct cp_web_req *orig = c->req;
	all.view = CP_WEB_TD; /* the profile: no bottom-up or flat view of it is built for this */
	c->req = &all;
	const struct cp_profile *p = cp_web_full_profile(c);
	c->req = orig;
	int rc = p ? 0 : c->full_rc;
	if (p && p->db.nprofiles != n)
		rc = cp_error(CP_EFORMAT, "the profile changed");
	else if (p && id->view != CP_WEB_TD)
		rc = row_values(c, id, n, tv, 0);
	else if (p && id->index >= p->db.nscopes)
		rc = cp_error(CP_ENOENT, "no scope %u", id->index);
	else if (p)
		thread_values(c, p, id->index, tv);
	return rc;
}

void cp_web_api_threads(struct cp_web_ctx *c, struct cp_web_resp *out)
{
	const struct cp_db *h = &c->m->head;
	struct strbuf *b = &out->body;
	if (!c->req->has_node) {
		write_profiles(h, b);
		strbuf_addstr(b, "}\n");
		return;
	}
	const struct cp_web_node *id = &c->req->node;
	if (id->view == CP_WEB_TD && id->noline) {
		cp_web_resp_error(out, 400,
				  "threads: a scope or a bottom-up or flat row is needed");
		return;
	}
	struct cp_web_req all = *c->req;
	all.thread = all.rank = -1;
	all.stat = 0;
	const struct cp_web_req *orig = c->req;
	c->req = &all;
	size_t n = h->nprofiles;
	struct tval *tv = xcalloc(n + 1, sizeof *tv);
	int rc = row_values(c, id, n, tv, 1);
	if (!rc)
		rc = full_values(c, id, n, tv);
	c->req = orig;
	if (rc < 0) {
		cp_web_api_fail(out, rc);
		free(tv);
		return;
	}
	qsort(tv, n, sizeof *tv, tval_cmp);
	write_profiles(h, b);
	char buf[32];
	cp_web_node_format(id, buf, sizeof buf);
	json_kv_str(b, "node", buf);
	strbuf_addf(b, ",\"metric\":%u,\"values\":[", c->req->metric);
	for (size_t i = 0; i < n; i++) {
		strbuf_addf(b, "%s{\"profile\":%u,\"incl\":", i ? "," : "", tv[i].profile);
		json_num(b, tv[i].incl);
		json_kv_num(b, "excl", tv[i].excl);
		strbuf_addch(b, '}');
	}
	strbuf_addstr(b, "],\"stats\":{");
	write_stat(b, "incl", tv, n, 0, 1);
	write_stat(b, "excl", tv, n, 1, 0);
	strbuf_addstr(b, "}}\n");
	free(tv);
}
