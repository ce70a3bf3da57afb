/* The report's model on hand-built measurements with a fake symbolizer: inclusive and
 * exclusive values, recursion, the bottom-up and flat views, row selection, threads,
 * inlined frames, process merging, JSON/CSV output. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "../format/mf-build.h"
#include "base/error.h"
#include "report/profile.h"
#include "report/render.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- fake symbolizer: procedure by 0x1000 block of offsets ---- */

static const char *const procs[] = {NULL,   "main",  "A",     "B",     "C",
				    "work", "light", "heavy", "nodebug"};
/* "nodebug" has a symbol but no line information, like code without DWARF */
static const char *const files[] = {NULL,       "/src/main.c", "/src/a.c", "/src/b.c", "/src/c.c",
				    "/src/w.c", "/src/l.c",    "/src/h.c", NULL};
enum { MAIN = 0x1000, A = 0x2000, B = 0x3000, C = 0x4000, WORK = 0x5000, LIGHT = 0x6000,
       HEAVY = 0x7000, NODEBUG = 0x8000 };
static int lookups;

static int fake_lookup(void *ctx, const char *path, const uint8_t *bid, size_t bidlen,
		       uint64_t off, int is_return, struct cp_sym_info *out)
{
	lookups++;
	memset(out, 0, sizeof *out);
	if (strcmp(path, "/bin/fake"))
		return cp_error(CP_ENOENT, "cannot open %s", path);
	uint64_t a = off - (is_return ? 1 : 0);
	size_t p = a >> 12;
	if (p == 0 || p >= sizeof procs / sizeof procs[0])
		return 0;
	out->found = 1;
	out->procedure = procs[p];
	out->proc_lo = p << 12;
	out->proc_hi = (p + 1) << 12;
	out->file = files[p];
	out->line = files[p] ? 10 + (int)((a & 0x7f) >> 4) : 0;
	if (a >= C + 0x80 && a < C + 0x100) { /* C inlines I at c.c:5 */
		out->ninline = 1;
		out->inline_frames[0].name = "I";
		out->inline_frames[0].file = "/src/c.c";
		out->inline_frames[0].line = 5;
		out->file = "/src/i.h";
		out->line = 3;
	}
	return 0;
}

static const struct cp_symops fake_ops = {fake_lookup, NULL};

/* ---- measurements from paths ---- */

#define RT 0x100000000ull /* a frame in the runtime's module (id 0) */

struct tpath {
	uint64_t cost;
	uint64_t frames[8]; /* outermost first; the last one is the sampled PC; 0 ends */
};

static uint32_t node_find_or_add(struct mfb *b, uint32_t parent, uint16_t kind, uint64_t off,
				 uint32_t module)
{
	size_t ns = sizeof(struct cp_mf_node) + 8 * b->nmetrics;
	size_t n = (b->len - sizeof(struct cp_mf_thread)) / ns;
	for (size_t i = 1; i < n; i++) {
		struct cp_mf_node x;
		memcpy(&x, b->buf + sizeof(struct cp_mf_thread) + i * ns, sizeof x);
		if (x.parent == parent && x.kind == kind && x.offset == off && x.module == module)
			return (uint32_t)i;
	}
	return mfb_node(b, parent, kind, module, off, NULL);
}

static void thread_paths(struct mfb *b, int pid, uint32_t tidx, const struct tpath *p, int np,
			 uint32_t module)
{
	mfb_thread(b, pid, 0, tidx, 1);
	for (int i = 0; i < np; i++) {
		uint32_t at = 0;
		int n = 0;
		while (n < 8 && p[i].frames[n])
			n++;
		for (int f = 0; f < n; f++) {
			uint16_t kind = f + 1 == n ? CP_MF_NODE_PC : CP_MF_NODE_CALL;
			/* return addresses point after the call: +1 keeps them in the procedure */
			uint64_t fr = p[i].frames[f] & ~RT;
			uint64_t off = fr + (kind == CP_MF_NODE_CALL ? 0x11 : 0x20);
			at = node_find_or_add(b, at, kind, off, p[i].frames[f] & RT ? 0 : module);
		}
		size_t ns = sizeof(struct cp_mf_node) + 8;
		uint8_t *v = b->buf + sizeof(struct cp_mf_thread) + at * ns + sizeof(struct cp_mf_node);
		uint64_t val;
		memcpy(&val, v, 8);
		val += p[i].cost;
		memcpy(v, &val, 8);
	}
	mfb_finish(b);
}

static char tmpdir[64];

static void dir_write(int pid, const char *module_path, const struct tpath *const *threads,
		      const int *np, int nthreads)
{
	static const char *const names[] = {"cputime"};
	struct mfb pb, tb;
	mfb_proc(&pb, pid, 0, 1, names);
	mfb_string(&pb, CP_MF_REC_CMDLINE, "./fake\0", 7);
	mfb_module(&pb, 0, "/opt/callpath/lib/libcallpath-rt.so", 0x7000000);
	mfb_module(&pb, 3, module_path, 0x400000);
	mfb_finish(&pb);
	char name[64];
	snprintf(name, sizeof name, "%d.0.proc", pid);
	assert_int_equal(mfb_write(&pb, tmpdir, name), 0);
	for (int t = 0; t < nthreads; t++) {
		thread_paths(&tb, pid, (uint32_t)t, threads[t], np[t], 3);
		snprintf(name, sizeof name, "%d.0.%d.thr", pid, t);
		assert_int_equal(mfb_write(&tb, tmpdir, name), 0);
		free(tb.buf);
	}
	free(pb.buf);
}

static int setup(void **state)
{
	strcpy(tmpdir, "/tmp/cp-test-views.XXXXXX");
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
	return system(cmd);
}

static void profile_of(struct cp_profile *p, const struct tpath *paths, int n, int thread)
{
	const struct tpath *t[1] = {paths};
	dir_write(100, "/bin/fake", t, &n, 1);
	struct cp_mf_dir d;
	assert_int_equal(cp_mf_dir_open(&d, tmpdir), 0);
	assert_int_equal(cp_profile_build(p, &d, &fake_ops, thread, 0), 0);
	cp_mf_dir_release(&d);
}

/* The child of node with this kind and name (the first, in creation order). */
static uint32_t child(const struct cp_view *v, uint32_t node, enum cp_vkind kind, const char *name)
{
	for (uint32_t k = v->nodes[node].first_child; k != UINT32_MAX; k = v->nodes[k].next_sibling)
		if (v->nodes[k].kind == kind && !strcmp(v->nodes[k].name, name))
			return k;
	fail_msg("no %s child '%s' under node %u (%s)", cp_vkind_name(kind), name, node,
		 v->nodes[node].name);
	return UINT32_MAX;
}

#define INCL(v, n) (cp_view_incl((v), (n))[0])
#define EXCL(v, n) (cp_view_excl((v), (n))[0])

static void test_inclusive_exclusive(void **state)
{
	const struct tpath paths[] = {
		{30, {MAIN, A}}, {60, {MAIN, B, C}}, {10, {MAIN}}, {0, {MAIN, B}},
	};
	struct cp_profile p;
	profile_of(&p, paths, 4, CP_PROFILE_ALL_THREADS);
	const struct cp_view *v = &p.td;
	assert_int_equal(INCL(v, 0), 100);
	uint32_t m = child(v, 0, CP_VK_PROCEDURE, "main");
	assert_int_equal(INCL(v, m), 100);
	assert_int_equal(EXCL(v, m), 10);
	uint32_t a = child(v, m, CP_VK_PROCEDURE, "A");
	assert_int_equal(INCL(v, a), 30);
	assert_int_equal(EXCL(v, a), 30);
	/* A's call site: the return address in main, looked up as the call before it. */
	assert_string_equal(v->nodes[a].file, "/src/main.c");
	assert_int_equal(v->nodes[a].line, 11);
	uint32_t b = child(v, m, CP_VK_PROCEDURE, "B");
	assert_int_equal(INCL(v, b), 60);
	assert_int_equal(EXCL(v, b), 0);
	uint32_t c = child(v, b, CP_VK_PROCEDURE, "C");
	assert_int_equal(INCL(v, c), 60);
	uint32_t l = child(v, c, CP_VK_LINE, "c.c:12");
	assert_int_equal(EXCL(v, l), 60);
	assert_string_equal(p.sum.command, "./fake");
	assert_int_equal(p.sum.nthreads, 1);
	cp_profile_release(&p);
}

static void test_recursion(void **state)
{
	const struct tpath paths[] = {
		{10, {MAIN, A, B, A, B}}, {5, {MAIN, A, B, A}}, {5, {MAIN, C}},
	};
	struct cp_profile p;
	profile_of(&p, paths, 3, CP_PROFILE_ALL_THREADS);
	struct cp_view bu, fl;
	cp_view_bottom_up(&p.td, &bu, NULL);
	assert_int_equal(INCL(&bu, 0), 20);
	uint32_t a = child(&bu, 0, CP_VK_PROCEDURE, "A");
	uint32_t b = child(&bu, 0, CP_VK_PROCEDURE, "B");
	assert_int_equal(INCL(&bu, a), 15); /* not 25: each sample counted once */
	assert_int_equal(EXCL(&bu, a), 5);
	assert_int_equal(INCL(&bu, b), 15);
	assert_int_equal(EXCL(&bu, b), 10);
	assert_int_equal(INCL(&bu, child(&bu, 0, CP_VK_PROCEDURE, "main")), 20);
	/* A's callers from its outermost occurrence: main only. */
	uint32_t am = child(&bu, a, CP_VK_CALLER, "main");
	assert_int_equal(INCL(&bu, am), 15);
	assert_int_equal(bu.nodes[a].first_child, am);
	assert_int_equal(bu.nodes[am].next_sibling, UINT32_MAX);
	/* B's outermost occurrence is called by A, itself called by main. */
	uint32_t ba = child(&bu, b, CP_VK_CALLER, "A");
	assert_int_equal(INCL(&bu, child(&bu, ba, CP_VK_CALLER, "main")), 15);
	cp_view_flat(&p.td, &fl);
	uint32_t mod = child(&fl, 0, CP_VK_MODULE, "/bin/fake");
	assert_int_equal(INCL(&fl, mod), 20);
	uint32_t fa = child(&fl, mod, CP_VK_FILE, "/src/a.c");
	uint32_t pa = child(&fl, fa, CP_VK_PROCEDURE, "A");
	assert_int_equal(INCL(&fl, pa), 15);
	assert_int_equal(EXCL(&fl, pa), 5);
	cp_view_release(&bu);
	cp_view_release(&fl);
	cp_profile_release(&p);
}

static void test_bottom_up_callers(void **state)
{
	const struct tpath paths[] = {{10, {MAIN, LIGHT, WORK}}, {90, {MAIN, HEAVY, WORK}}};
	struct cp_profile p;
	profile_of(&p, paths, 2, CP_PROFILE_ALL_THREADS);
	struct cp_view bu;
	cp_view_bottom_up(&p.td, &bu, NULL);
	uint32_t w = child(&bu, 0, CP_VK_PROCEDURE, "work");
	assert_int_equal(INCL(&bu, w), 100);
	assert_int_equal(EXCL(&bu, w), 100);
	uint32_t h = child(&bu, w, CP_VK_CALLER, "heavy");
	uint32_t l = child(&bu, w, CP_VK_CALLER, "light");
	assert_int_equal(INCL(&bu, h), 90);
	assert_int_equal(EXCL(&bu, h), 90);
	assert_int_equal(INCL(&bu, l), 10);
	assert_string_equal(bu.nodes[h].file, "/src/h.c"); /* the call site inside heavy */
	assert_int_equal(INCL(&bu, child(&bu, h, CP_VK_CALLER, "main")), 90);
	uint32_t hv = child(&bu, 0, CP_VK_PROCEDURE, "heavy");
	assert_int_equal(INCL(&bu, hv), 90);
	assert_int_equal(EXCL(&bu, hv), 0);
	cp_view_release(&bu);
	cp_profile_release(&p);
}

static void test_flat(void **state)
{
	const struct tpath paths[] = {{10, {MAIN, LIGHT, WORK}}, {90, {MAIN, HEAVY, WORK}},
				      {5, {MAIN, HEAVY}}};
	struct cp_profile p;
	profile_of(&p, paths, 3, CP_PROFILE_ALL_THREADS);
	struct cp_view fl;
	cp_view_flat(&p.td, &fl);
	uint32_t mod = child(&fl, 0, CP_VK_MODULE, "/bin/fake");
	assert_int_equal(INCL(&fl, mod), 105);
	assert_int_equal(EXCL(&fl, mod), 105);
	uint32_t fh = child(&fl, mod, CP_VK_FILE, "/src/h.c");
	uint32_t ph = child(&fl, fh, CP_VK_PROCEDURE, "heavy");
	assert_int_equal(INCL(&fl, ph), 95);
	assert_int_equal(EXCL(&fl, ph), 5);
	/* heavy's lines: the call site of work (11) holds 90 inclusive, the sampled line 5. */
	uint32_t call = child(&fl, ph, CP_VK_LINE, "h.c:11");
	assert_int_equal(INCL(&fl, call), 90);
	assert_int_equal(EXCL(&fl, call), 0);
	uint32_t stmt = child(&fl, ph, CP_VK_LINE, "h.c:12");
	assert_int_equal(EXCL(&fl, stmt), 5);
	uint32_t fw = child(&fl, mod, CP_VK_FILE, "/src/w.c");
	assert_int_equal(EXCL(&fl, child(&fl, fw, CP_VK_PROCEDURE, "work")), 100);
	cp_view_release(&fl);
	cp_profile_release(&p);
}

/* Code without line information has no file or line level in the flat view: its procedure
 * sits directly below the module. */
static void test_flat_without_lines(void **state)
{
	const struct tpath paths[] = {{7, {MAIN, NODEBUG}}, {3, {MAIN, NODEBUG, WORK}}};
	struct cp_profile p;
	profile_of(&p, paths, 2, CP_PROFILE_ALL_THREADS);
	struct cp_view fl;
	cp_view_flat(&p.td, &fl);
	uint32_t mod = child(&fl, 0, CP_VK_MODULE, "/bin/fake");
	uint32_t nd = child(&fl, mod, CP_VK_PROCEDURE, "nodebug");
	assert_int_equal(INCL(&fl, nd), 10);
	assert_int_equal(EXCL(&fl, nd), 7);
	for (uint32_t i = 1; i < fl.n; i++) {
		assert_true(fl.nodes[i].kind != CP_VK_LINE || fl.nodes[i].parent != nd);
		assert_true(fl.nodes[i].kind != CP_VK_FILE || fl.nodes[i].name != NULL);
	}
	cp_view_release(&fl);
	cp_profile_release(&p);
}

static size_t rows_of(const struct cp_profile *p, const struct cp_report_options *o,
		      struct cp_render *r)
{
	memset(r, 0, sizeof *r);
	r->view = &p->td;
	r->sum = &p->sum;
	r->opt = o;
	r->view_name = "top-down";
	r->threshold = o->threshold < 0 ? 0 : o->threshold;
	assert_int_equal(cp_render_select(r), 0);
	return r->rows.n;
}

static void test_select(void **state)
{
	const struct tpath paths[] = {{30, {MAIN, A}}, {69, {MAIN, B, C}}, {1, {MAIN, B, A}}};
	struct cp_profile p;
	profile_of(&p, paths, 3, CP_PROFILE_ALL_THREADS);
	struct cp_report_options o;
	struct cp_render r;
	cp_report_options_init(&o);
	/* root, main, B, C, c-line, A, a-line, A (under B), a-line */
	assert_int_equal(rows_of(&p, &o, &r), 9);
	assert_string_equal(p.td.nodes[r.rows.rows[2].node].name, "B"); /* sorted by inclusive */
	cp_render_release(&r);
	o.threshold = 2; /* hides the 1% path B -> A */
	assert_int_equal(rows_of(&p, &o, &r), 7);
	cp_render_release(&r);
	o.threshold = 0;
	o.depth = 2;
	assert_int_equal(rows_of(&p, &o, &r), 4); /* root, main, B, A */
	assert_true(r.rows.rows[3].last);
	cp_render_release(&r);
	o.depth = 0;
	o.focus = "A"; /* both occurrences of A, as roots */
	assert_int_equal(rows_of(&p, &o, &r), 5);
	assert_int_equal(r.rows.rows[1].depth, 1);
	assert_int_equal(r.rows.rows[1].parent, 0);
	assert_int_equal(INCL(&p.td, r.rows.rows[1].node), 30);
	assert_int_equal(INCL(&p.td, r.rows.rows[3].node), 1);
	cp_render_release(&r);
	o.focus = "nosuch";
	memset(&r, 0, sizeof r);
	r.view = &p.td;
	r.sum = &p.sum;
	r.opt = &o;
	assert_int_equal(cp_render_select(&r), CP_ENOENT);
	cp_render_release(&r);
	o.focus = NULL;
	o.sort = CP_SORT_NAME;
	rows_of(&p, &o, &r);
	assert_string_equal(p.td.nodes[r.rows.rows[2].node].name, "A");
	cp_render_release(&r);
	cp_profile_release(&p);
}

static void test_fold_and_truncate(void **state)
{
	const struct tpath paths[] = {{60, {MAIN, A, B}}, {40, {MAIN, A, C}}};
	struct cp_profile p;
	profile_of(&p, paths, 2, CP_PROFILE_ALL_THREADS);
	struct cp_report_options o;
	struct cp_render r;
	cp_report_options_init(&o);
	/* root, main, A, B, b-line, C, c-line */
	assert_int_equal(rows_of(&p, &o, &r), 7);
	cp_render_fold_chain(&r);
	assert_string_equal(r.via, "main");
	assert_int_equal(r.rows.n, 6);
	assert_string_equal(p.td.nodes[r.rows.rows[1].node].name, "A");
	assert_int_equal(r.rows.rows[1].depth, 1);
	assert_int_equal(r.rows.rows[1].parent, 0);
	assert_int_equal(r.rows.rows[2].depth, 2);
	assert_false(r.rows.rows[2].last); /* B, then C */
	cp_render_truncate(&r, 4);          /* root, A, B, b-line */
	assert_true(r.rows.rows[2].last);   /* C is gone */
	cp_render_release(&r);
	cp_profile_release(&p);
}

static void test_runtime_frames_hidden(void **state)
{
	/* main -> the runtime's nanosleep wrapper -> B: the wrapper is not the program's. */
	const struct tpath paths[] = {{10, {MAIN, RT | 0x2000, B}}, {4, {MAIN, RT | 0x3000}}};
	struct cp_profile p;
	profile_of(&p, paths, 2, CP_PROFILE_ALL_THREADS);
	const struct cp_view *v = &p.td;
	uint32_t m = child(v, 0, CP_VK_PROCEDURE, "main");
	uint32_t b = child(v, m, CP_VK_PROCEDURE, "B");
	assert_int_equal(INCL(v, b), 10);
	assert_string_equal(v->nodes[b].file, "/src/main.c"); /* called from main's line */
	/* A sample inside the runtime itself stays visible. */
	assert_int_equal(INCL(v, child(v, m, CP_VK_PROCEDURE, "[libcallpath-rt.so+0x3020]")), 4);
	cp_profile_release(&p);
}

static void test_threads(void **state)
{
	const struct tpath t0[] = {{30, {MAIN, A}}};
	const struct tpath t1[] = {{50, {MAIN, B}}, {20, {MAIN, A}}};
	const struct tpath *t[2] = {t0, t1};
	int np[2] = {1, 2};
	dir_write(200, "/bin/fake", t, np, 2);
	struct cp_mf_dir d;
	struct cp_profile p;
	assert_int_equal(cp_mf_dir_open(&d, tmpdir), 0);
	assert_int_equal(cp_profile_build(&p, &d, &fake_ops, CP_PROFILE_ALL_THREADS, 0), 0);
	assert_int_equal(INCL(&p.td, 0), 100);
	assert_int_equal(INCL(&p.td, child(&p.td, child(&p.td, 0, CP_VK_PROCEDURE, "main"),
					   CP_VK_PROCEDURE, "A")),
			 50);
	cp_profile_release(&p);
	assert_int_equal(cp_profile_build(&p, &d, &fake_ops, 1, 0), 0);
	assert_int_equal(INCL(&p.td, 0), 70);
	assert_int_equal(p.sum.nthreads, 1);
	assert_int_equal(p.sum.nthreads_total, 2);
	cp_profile_release(&p);
	assert_int_equal(cp_profile_build(&p, &d, &fake_ops, 0, 200), 0);
	assert_int_equal(INCL(&p.td, 0), 30);
	cp_profile_release(&p);
	assert_int_equal(cp_profile_build(&p, &d, &fake_ops, 5, 0), CP_ENOENT);
	assert_non_null(strstr(cp_error_message(), "no thread 5"));
	cp_mf_dir_release(&d);
}

static void test_inlined_and_symbolize_once(void **state)
{
	const struct tpath paths[] = {{7, {MAIN, C + 0x70}}, {3, {MAIN, C + 0x70}}};
	lookups = 0;
	struct cp_profile p;
	profile_of(&p, paths, 2, CP_PROFILE_ALL_THREADS);
	assert_int_equal(lookups, 2); /* one return address, one PC */
	const struct cp_view *v = &p.td;
	uint32_t c = child(v, child(v, 0, CP_VK_PROCEDURE, "main"), CP_VK_PROCEDURE, "C");
	uint32_t i = child(v, c, CP_VK_INLINED, "I");
	assert_string_equal(v->nodes[i].file, "/src/c.c");
	assert_int_equal(v->nodes[i].line, 5);
	uint32_t l = child(v, i, CP_VK_LINE, "i.h:3");
	assert_int_equal(EXCL(v, l), 10);
	assert_int_equal(EXCL(v, i), 10);
	assert_int_equal(EXCL(v, c), 10);
	cp_profile_release(&p);
}

static void test_merge_and_missing_module(void **state)
{
	const struct tpath paths[] = {{40, {MAIN, A}}};
	const struct tpath *t[1] = {paths};
	int np = 1;
	dir_write(300, "/bin/fake", t, &np, 1);
	dir_write(301, "/bin/fake", t, &np, 1);
	dir_write(302, "/lib/missing.so", t, &np, 1);
	struct cp_mf_dir d;
	struct cp_profile p;
	assert_int_equal(cp_mf_dir_open(&d, tmpdir), 0);
	assert_int_equal(cp_profile_build(&p, &d, &fake_ops, CP_PROFILE_ALL_THREADS, 0), 0);
	assert_int_equal(INCL(&p.td, 0), 120);
	assert_int_equal(p.sum.nprocs, 3);
	uint32_t m = child(&p.td, 0, CP_VK_PROCEDURE, "main");
	assert_int_equal(INCL(&p.td, m), 80); /* two processes, one tree */
	assert_int_equal(INCL(&p.td, child(&p.td, 0, CP_VK_PROCEDURE, "[missing.so+0x1011]")), 40);
	assert_int_equal(p.sum.nwarnings, 1);
	assert_non_null(strstr(p.sum.warnings[0], "/lib/missing.so"));
	cp_profile_release(&p);
	cp_mf_dir_release(&d);
}

static char *render_to_string(const struct cp_profile *p, struct cp_report_options *o)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_int_equal(cp_report_profile(p, o, f), 0);
	fclose(f);
	return buf;
}

static void test_outputs(void **state)
{
	const struct tpath paths[] = {{10, {MAIN, LIGHT, WORK}}, {90, {MAIN, HEAVY, WORK}}};
	struct cp_profile p;
	profile_of(&p, paths, 2, CP_PROFILE_ALL_THREADS);
	struct cp_report_options o;
	cp_report_options_init(&o);
	o.format = CP_FORMAT_JSON;
	o.view = CP_VIEW_BOTTOM_UP;
	char *s = render_to_string(&p, &o);
	const char *want[] = {"{\"version\":1,", "\"metrics\":[{\"name\":\"cputime\",\"unit\":\"ns\"",
			      "\"view\":\"bottom-up\"", "\"kind\":\"caller\",\"name\":\"heavy\"",
			      "\"inclusive\":[90],\"exclusive\":[90]", "\"parent\":null",
			      "\"delivered_rate\":1000.000", "\"summary\":{"};
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
		if (!strstr(s, want[i]))
			fail_msg("JSON lacks %s:\n%s", want[i], s);
	free(s);
	o.format = CP_FORMAT_CSV;
	o.view = CP_VIEW_TOP_DOWN;
	s = render_to_string(&p, &o);
	assert_non_null(strstr(s, "id,parent,depth,kind,name,module,file,line,cputime_inclusive"));
	assert_non_null(strstr(s, ",procedure,heavy,/bin/fake,/src/main.c,11,90,90.0000,0,0.0000"));
	free(s);
	o.format = CP_FORMAT_TEXT;
	o.ascii = 1;
	s = render_to_string(&p, &o);
	assert_non_null(strstr(s, "command:     ./fake"));
	if (!strstr(s, " 90.00%     0.000s   0.00%     |- heavy  main.c:11  (fake)\n"
		       " 90.00%     0.000s  90.00%     |  `- work  h.c:11  (fake)\n"))
		fail_msg("text:\n%s", s);
	free(s);
	cp_profile_release(&p);
}

static void test_json_bytes(void **state)
{
	const struct tpath paths[] = {{40, {MAIN, A}}};
	const struct tpath *t[1] = {paths};
	int np = 1;
	dir_write(400, "/lib/odd\xff\xc3(.so", t, &np, 1);
	struct cp_mf_dir d;
	struct cp_profile p;
	assert_int_equal(cp_mf_dir_open(&d, tmpdir), 0);
	assert_int_equal(cp_profile_build(&p, &d, &fake_ops, CP_PROFILE_ALL_THREADS, 0), 0);
	struct cp_report_options o;
	cp_report_options_init(&o);
	o.format = CP_FORMAT_JSON;
	char *s = render_to_string(&p, &o);
	/* Not UTF-8: each bad byte becomes U+FFFD, so the document stays valid JSON. */
	if (!strstr(s, "\"module\":\"/lib/odd\xef\xbf\xbd\xef\xbf\xbd(.so\""))
		fail_msg("JSON:\n%s", s);
	free(s);
	cp_profile_release(&p);
	cp_mf_dir_release(&d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_inclusive_exclusive, setup, teardown),
		cmocka_unit_test_setup_teardown(test_recursion, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bottom_up_callers, setup, teardown),
		cmocka_unit_test_setup_teardown(test_flat, setup, teardown),
		cmocka_unit_test_setup_teardown(test_flat_without_lines, setup, teardown),
		cmocka_unit_test_setup_teardown(test_select, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fold_and_truncate, setup, teardown),
		cmocka_unit_test_setup_teardown(test_runtime_frames_hidden, setup, teardown),
		cmocka_unit_test_setup_teardown(test_threads, setup, teardown),
		cmocka_unit_test_setup_teardown(test_inlined_and_symbolize_once, setup, teardown),
		cmocka_unit_test_setup_teardown(test_merge_and_missing_module, setup, teardown),
		cmocka_unit_test_setup_teardown(test_outputs, setup, teardown),
		cmocka_unit_test_setup_teardown(test_json_bytes, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
