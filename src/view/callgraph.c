/* /api/callgraph: the hottest procedures as boxes and the calls between them as arcs, laid
 * out by Graphviz (libgvc: the only code that uses it) in the manner of Xprofiler and
 * pprof: box size and colour by inclusive cost, clusters by load module. Procedure-level
 * costs come from the in-memory profile: a procedure's inclusive value counts each of its
 * outermost frames (recursion once), an arc caller -> callee the inclusive values of the
 * callee's frames called from the caller. */
#include "view/api-impl.h"

#include "base/error.h"
#include "base/xalloc.h"
#include "report/profile.h"

#include <graphviz/gvc.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_NODES 300

struct pcost {
	uint32_t proc;
	double incl, excl;
};

struct arc {
	uint32_t from, to; /* procedure ids */
	double v;
};

struct graph {
	struct pcost *procs; /* per procedure id */
	struct arc *arcs;
	size_t narcs, aarcs;
	double total;
};

/* The enclosing procedure frame of scope s (walking up through inlined frames and loops),
 * or CP_DB_NONE. */
static uint32_t frame_above(const struct cp_db *db, uint32_t s)
{
	for (s = db->scopes[s].parent; s != CP_DB_NONE; s = db->scopes[s].parent)
		if (db->scopes[s].kind == CP_DBK_PROC)
			return s;
	return CP_DB_NONE;
}

static int recursive(const struct cp_db *db, uint32_t s)
{
	uint32_t p = db->scopes[s].proc;
	for (uint32_t a = frame_above(db, s); a != CP_DB_NONE; a = frame_above(db, a))
		if (db->scopes[a].proc == p)
			return 1;
	return 0;
}

static void add_arc(struct graph *g, uint32_t from, uint32_t to, double v)
{
	for (size_t i = 0; i < g->narcs; i++)
		if (g->arcs[i].from == from && g->arcs[i].to == to) {
			g->arcs[i].v += v;
			return;
		}
	XGROW(g->arcs, g->narcs + 1, g->aarcs);
	g->arcs[g->narcs++] = (struct arc){from, to, v};
}

static void graph_build(const struct cp_profile *p, uint32_t metric, struct graph *g)
{
	const struct cp_db *db = &p->db;
	memset(g, 0, sizeof *g);
	g->procs = xcalloc(db->nprocs + 1, sizeof *g->procs);
	for (uint32_t i = 0; i < db->nprocs; i++)
		g->procs[i].proc = i;
	g->total = cp_view_incl(&p->td, 0)[metric];
	for (uint32_t s = 1; s < db->nscopes; s++) {
		const struct cp_db_scope *sc = &db->scopes[s];
		if (sc->kind != CP_DBK_PROC || sc->proc >= db->nprocs)
			continue;
		double in = cp_view_incl(&p->td, s)[metric], ex = cp_view_excl(&p->td, s)[metric];
		if (!(in > 0))
			continue;
		g->procs[sc->proc].excl += ex;
		if (recursive(db, s))
			continue;
		g->procs[sc->proc].incl += in;
		uint32_t up = frame_above(db, s);
		if (up != CP_DB_NONE && db->scopes[up].proc < db->nprocs &&
		    db->scopes[up].proc != sc->proc)
			add_arc(g, db->scopes[up].proc, sc->proc, in);
	}
}

static int pcost_cmp(const void *a, const void *b)
{
	const struct pcost *x = a, *y = b;
	if (x->incl != y->incl)
		return x->incl > y->incl ? -1 : 1;
	return (x->proc > y->proc) - (x->proc < y->proc);
}

static void dot_quote(struct strbuf *b, const char *s)
{
	strbuf_addch(b, '"');
	for (; *s; s++) {
		if (*s == '\n') {
			strbuf_addstr(b, "\\n");
			continue;
		}
		if (*s == '"' || *s == '\\')
			strbuf_addch(b, '\\');
		if ((unsigned char)*s >= 0x20)
			strbuf_addch(b, *s);
	}
	strbuf_addch(b, '"');
}

static double pct(double v, double total)
{
	return total > 0 ? 100 * v / total : 0;
}

/* Writes the DOT text of the n hottest procedures (sorted[0..n)). */
static void write_dot(const struct cp_db *db, const struct graph *g, const struct pcost *sorted,
		      size_t n, uint8_t *shown, struct strbuf *b)
{
	strbuf_addstr(b, "digraph callgraph {\n graph [rankdir=TB, fontname=\"sans-serif\","
			 " nodesep=0.3, ranksep=0.4];\n node [shape=box, style=\"filled,rounded\","
			 " fontname=\"sans-serif\", fontsize=10];\n edge [fontname=\"sans-serif\","
			 " fontsize=9, color=\"#666666\"];\n");
	double top = n ? sorted[0].incl : 0;
	for (size_t mod = 0; mod < db->nmodules; mod++) {
		int any = 0;
		for (size_t i = 0; i < n; i++) {
			const struct cp_db_proc *pr = &db->procs[sorted[i].proc];
			if (pr->module != mod)
				continue;
			if (!any++) {
				strbuf_addf(b, " subgraph cluster_m%zu {\n  label=", mod);
				dot_quote(b, db->modules[mod].name);
				strbuf_addstr(b, "; style=dashed; color=\"#999999\";\n");
			}
			double share = top > 0 ? sorted[i].incl / top : 0;
			int heat = (int)(255 - 155 * share);
			char label[600];
			snprintf(label, sizeof label, "%.200s\n%.1f%% incl / %.1f%% excl", pr->name,
				 pct(sorted[i].incl, g->total), pct(sorted[i].excl, g->total));
			strbuf_addf(b, "  p%u [id=\"p%u\", label=", sorted[i].proc, sorted[i].proc);
			dot_quote(b, label);
			strbuf_addf(b, ", fontsize=%.0f, fillcolor=\"#ff%02x%02x\"];\n",
				    9 + 10 * share, heat, heat);
		}
		if (any)
			strbuf_addstr(b, " }\n");
	}
	for (size_t i = 0; i < g->narcs; i++) {
		const struct arc *a = &g->arcs[i];
		if (!shown[a->from] || !shown[a->to])
			continue;
		double share = top > 0 ? a->v / top : 0;
		strbuf_addf(b, " p%u -> p%u [label=\"%.1f%%\", penwidth=%.2f];\n", a->from, a->to,
			    pct(a->v, g->total), 0.5 + 4 * share);
	}
	strbuf_addstr(b, "}\n");
}

/* Sanitizer builds only (LeakSanitizer reads this): the one Graphviz context lives until
 * exit, and Graphviz, its plugins and the fontconfig/pango/cairo stack under them keep
 * caches they never free. Their frames are suppressed by library; callpath's own
 * allocations stay leak-checked. */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
	return "leak:libgvc.so\nleak:libcgraph.so\nleak:libcdt.so\nleak:libpathplan.so\n"
	       "leak:libgvplugin_\nleak:libfontconfig.so\nleak:libpango\nleak:libcairo.so\n"
	       "leak:libglib-2.0.so\nleak:libgobject-2.0.so\nleak:libharfbuzz.so\n"
	       "leak:libfreetype.so\nleak:libexpat.so\nleak:libltdl.so\n";
}

/* Lays out dot with Graphviz into SVG. One Graphviz context for the process (used under
 * the server's lock): Graphviz's pango plugin keeps a pointer to the last font name, which
 * lives in the context; a context per call freed it before the next call read it (a
 * use-after-free from the second call graph on, found by ASan). */
static int render_svg(const char *dot, struct strbuf *out)
{
	static GVC_t *gvc;
	if (!gvc)
		gvc = gvContext();
	if (!gvc)
		return cp_error(CP_ENOMEM, "callgraph: Graphviz failed to start");
	Agraph_t *g = agmemread(dot);
	int rc = 0;
	char *data = NULL;
	unsigned int len = 0;
	if (!g) {
		rc = cp_error(CP_EINTERNAL, "callgraph: Graphviz refused the graph");
	} else if (gvLayout(gvc, g, "dot") || gvRenderData(gvc, g, "svg", &data, &len)) {
		rc = cp_error(CP_EINTERNAL, "callgraph: Graphviz failed to lay out the graph");
	} else {
		strbuf_add(out, data, len);
	}
	if (data)
		gvFreeRenderData(data);
	if (g) {
		gvFreeLayout(gvc, g);
		agclose(g);
	}
	return rc;
}

void cp_web_api_callgraph(struct cp_web_ctx *c, struct cp_web_resp *out)
{
	struct cp_web_req td = *c->req;
	td.view = CP_WEB_TD;
	const struct cp_web_req *orig = c->req;
	c->req = &td;
	const struct cp_profile *p = cp_web_full_profile(c);
	c->req = orig;
	if (!p) {
		cp_web_api_fail(out, c->full_rc);
		return;
	}
	uint32_t metric = c->req->metric;
	if (metric >= p->td.nmetrics) {
		cp_web_resp_error(out, 400,
				  "callgraph: derived metrics of a request are not drawn");
		return;
	}
	struct graph g;
	graph_build(p, metric, &g);
	size_t np = p->db.nprocs, want = c->req->nodes ? c->req->nodes : 40;
	if (want > MAX_NODES)
		want = MAX_NODES;
	struct pcost *sorted = xmalloc((np + 1) * sizeof *sorted);
	memcpy(sorted, g.procs, np * sizeof *sorted);
	qsort(sorted, np, sizeof *sorted, pcost_cmp);
	size_t n = 0;
	uint8_t *shown = xcalloc(np + 1, 1);
	while (n < np && n < want && sorted[n].incl > 0)
		shown[sorted[n++].proc] = 1;
	struct strbuf dot;
	strbuf_init(&dot);
	write_dot(&p->db, &g, sorted, n, shown, &dot);
	if (c->req->format_dot) {
		out->type = "text/plain; charset=utf-8";
		strbuf_add(&out->body, dot.buf, dot.len);
	} else {
		out->type = "image/svg+xml";
		int rc = render_svg(dot.buf, &out->body);
		if (rc)
			cp_web_api_fail(out, rc);
	}
	strbuf_release(&dot);
	free(shown);
	free(sorted);
	free(g.procs);
	free(g.arcs);
}
