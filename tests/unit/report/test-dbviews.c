/* The report's views on hand-made profile databases (db.h): the top-down view is the scope
 * tree (procedure frames, inlined frames, loops, statements); the bottom-up view counts a
 * recursive procedure's samples once; the flat view nests loops under procedures and ranks
 * them as peers with --flatten 3; --hot-path; statistics over threads; derived metrics with
 * a division by zero (no value: empty, null, sorted last); thread selection. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "base/error.h"
#include "report/profile.h"
#include "report/render.h"
#include "view-find.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- a hand-made database ----
 *
 * main (a.c) calls
 *   work at a.c:20: loop at a.c:30-40 > kernel [inlined] at a.c:32 > loop at k.h:5-7 > k.h:6
 *   rec at a.c:21: rec at a.c:50 > rec at a.c:50 ... statements a.c:51
 *   idle at a.c:22: a.c:60 (cputime only: cycles/cputime is 0)
 *   nocpu at a.c:23: a.c:70 (cycles only: cycles/cputime has no value)
 * Metrics: cputime (ns), cycles (events). Profiles: thread 0 and thread 1. */
struct fix {
	struct cp_db db;
	uint32_t mod, fa, fk;
	uint32_t main_s, work_s, loop_s, kern_s, iloop_s, kstmt_s, rec1, rec2, rec3, rstmt1, rstmt3,
	    idle_s, idle_stmt, wstmt, nocpu_stmt;
	uint32_t cpu, cyc;
};

static uint32_t proc(struct fix *f, const char *name, uint32_t line, uint64_t entry)
{
	struct cp_db_proc p = {
	    .name = name, .module = f->mod, .file = f->fa, .line = line, .entry = entry};
	return cp_db_proc(&f->db, &p);
}

static uint32_t frame(struct fix *f, uint32_t parent, int kind, uint32_t pr, uint32_t file,
		      uint32_t line)
{
	struct cp_db_scope s = {
	    .kind = (uint8_t)kind, .proc = pr, .module = f->mod, .file = file, .line = line};
	uint32_t x = cp_db_scope_child(&f->db, parent, &s);
	assert_int_not_equal(x, CP_DB_NONE);
	return x;
}

static uint32_t loop(struct fix *f, uint32_t parent, uint32_t pr, uint32_t file, uint32_t lo,
		     uint32_t hi, uint64_t addr)
{
	struct cp_db_scope s = {.kind = CP_DBK_LOOP,
				.proc = pr,
				.module = f->mod,
				.file = file,
				.line = lo,
				.line_lo = lo,
				.line_hi = hi,
				.addr = addr};
	return cp_db_scope_child(&f->db, parent, &s);
}

static uint32_t stmt(struct fix *f, uint32_t parent, uint32_t pr, uint32_t file, uint32_t line)
{
	struct cp_db_scope s = {
	    .kind = CP_DBK_STMT, .proc = pr, .module = f->mod, .file = file, .line = line};
	return cp_db_scope_child(&f->db, parent, &s);
}

/* values: thread 0 gets t0 * the base values, thread 1 t1 * them */
static void fix_build(struct fix *f, double t0, double t1)
{
	memset(f, 0, sizeof *f);
	cp_db_init(&f->db);
	struct cp_db *db = &f->db;
	f->mod = cp_db_module(db, "/bin/prog", NULL, 0, CP_DB_MOD_EXE);
	f->fa = cp_db_file(db, "/src/a.c");
	f->fk = cp_db_file(db, "/src/k.h");
	uint32_t pmain = proc(f, "main", 1, 0x100), pwork = proc(f, "work", 10, 0x200),
		 pkern = proc(f, "kernel", 3, 0), prec = proc(f, "rec", 49, 0x300),
		 pidle = proc(f, "idle", 59, 0x400);
	f->main_s = frame(f, 0, CP_DBK_PROC, pmain, CP_DB_NONE, 0);
	f->work_s = frame(f, f->main_s, CP_DBK_PROC, pwork, f->fa, 20);
	f->loop_s = loop(f, f->work_s, pwork, f->fa, 30, 40, 0x210);
	f->wstmt = stmt(f, f->loop_s, pwork, f->fa, 31);
	f->kern_s = frame(f, f->loop_s, CP_DBK_INLINE, pkern, f->fa, 32);
	f->iloop_s = loop(f, f->kern_s, pkern, f->fk, 5, 7, 0x220);
	f->kstmt_s = stmt(f, f->iloop_s, pkern, f->fk, 6);
	f->rec1 = frame(f, f->main_s, CP_DBK_PROC, prec, f->fa, 21);
	f->rec2 = frame(f, f->rec1, CP_DBK_PROC, prec, f->fa, 50);
	f->rec3 = frame(f, f->rec2, CP_DBK_PROC, prec, f->fa, 50);
	f->rstmt1 = stmt(f, f->rec1, prec, f->fa, 51);
	f->rstmt3 = stmt(f, f->rec3, prec, f->fa, 51);
	f->idle_s = frame(f, f->main_s, CP_DBK_PROC, pidle, f->fa, 22);
	f->idle_stmt = stmt(f, f->idle_s, pidle, f->fa, 60);
	uint32_t pnocpu = proc(f, "nocpu", 69, 0x500);
	uint32_t nocpu_s = frame(f, f->main_s, CP_DBK_PROC, pnocpu, f->fa, 23);
	f->nocpu_stmt = stmt(f, nocpu_s, pnocpu, f->fa, 70);
	struct cp_db_metric m = {.name = "cputime", .unit = "ns", .period = 1000000};
	f->cpu = cp_db_metric_add(db, &m);
	m = (struct cp_db_metric){.name = "cycles", .unit = "events"};
	f->cyc = cp_db_metric_add(db, &m);
	for (int t = 0; t < 2; t++) {
		struct cp_db_profile p = {
		    .pid = 100, .tid = 100 + t, .tidx = (uint32_t)t, .rank = -1};
		uint32_t id = cp_db_profile_add(db, &p);
		double k = t ? t1 : t0;
		if (k == 0)
			continue;
		cp_db_add(db, id, f->wstmt, f->cpu, 100 * k);
		cp_db_add(db, id, f->kstmt_s, f->cpu, 500 * k);
		cp_db_add(db, id, f->rstmt1, f->cpu, 50 * k);
		cp_db_add(db, id, f->rstmt3, f->cpu, 150 * k);
		cp_db_add(db, id, f->idle_stmt, f->cpu, 200 * k);
		cp_db_add(db, id, f->wstmt, f->cyc, 300 * k);
		cp_db_add(db, id, f->kstmt_s, f->cyc, 2000 * k);
		cp_db_add(db, id, f->rstmt3, f->cyc, 10 * k);
		cp_db_add(db, id, f->nocpu_stmt, f->cyc, 5 * k);
		/* cycles without cputime: the ratio cycles/cputime has no value there */
		cp_db_add(db, id, f->rstmt1, f->cyc, 0);
	}
	assert_int_equal(cp_db_finish(db), 0);
}

static void prof_open(struct cp_profile *p, double t0, double t1, int thread,
		      const char *const *derived, size_t nd)
{
	struct fix f;
	fix_build(&f, t0, t1);
	assert_int_equal(cp_profile_from_db(p, &f.db, "hand-made", thread, 0, derived, nd), 0);
}

/* ---- top-down ---- */

static void test_top_down(void **state)
{
	(void)state;
	struct cp_profile p;
	prof_open(&p, 1, 0, CP_PROFILE_ALL_THREADS, NULL, 0);
	const struct cp_view *v = &p.td;
	assert_int_equal(v->n, p.db.nscopes);
	assert_true(cp_view_incl(v, 0)[0] == 1000);
	uint32_t m = child_named(v, 0, "main"), w = child_named(v, m, "work");
	assert_int_equal(v->nodes[w].kind, CP_VK_PROCEDURE);
	assert_string_equal(v->nodes[w].file, "/src/a.c");
	assert_int_equal(v->nodes[w].line, 20);
	uint32_t l = child_named(v, w, "loop at a.c:30-40");
	assert_int_equal(v->nodes[l].kind, CP_VK_LOOP);
	assert_int_equal(v->nodes[l].line_end, 40);
	uint32_t k = child_named(v, l, "kernel");
	assert_int_equal(v->nodes[k].kind, CP_VK_INLINED);
	uint32_t il = child_named(v, k, "loop at k.h:5-7");
	uint32_t s = child_named(v, il, "k.h:6");
	assert_int_equal(v->nodes[s].kind, CP_VK_LINE);
	/* exclusive of frames and loops = their bodies, calls excluded */
	assert_true(cp_view_excl(v, w)[0] == 600 && cp_view_incl(v, w)[0] == 600);
	assert_true(cp_view_excl(v, l)[0] == 600 && cp_view_excl(v, k)[0] == 500);
	assert_true(cp_view_excl(v, m)[0] == 0 && cp_view_incl(v, m)[0] == 1000);
	uint32_t r1 = child_named(v, m, "rec");
	assert_true(cp_view_incl(v, r1)[0] == 200 && cp_view_excl(v, r1)[0] == 50);
	/* top-down sums agree with the database's statistics */
	for (uint32_t i = 0; i < v->n; i++)
		assert_true(fabs(cp_view_incl(v, i)[0] - cp_db_stat_get(&p.db, i, 0, 1)->sum) <
			    1e-9);
	cp_profile_release(&p);
}

/* ---- bottom-up: recursion counted once ---- */

static void test_bottom_up_recursion(void **state)
{
	(void)state;
	struct cp_profile p;
	prof_open(&p, 1, 0, CP_PROFILE_ALL_THREADS, NULL, 0);
	struct cp_view bu;
	cp_profile_view(&p, CP_VIEW_BOTTOM_UP, CP_DB_STAT_SUM, NULL, &bu);
	uint32_t rec = child_named(&bu, 0, "rec");
	/* rec is on the path three times for 150, once for 50: 200, not 50 + 3 * 150 */
	assert_true(cp_view_incl(&bu, rec)[0] == 200);
	assert_true(cp_view_excl(&bu, rec)[0] == 200);
	/* its only caller chain starts at the outermost occurrence: main */
	uint32_t c = bu.nodes[rec].first_child;
	assert_int_not_equal(c, UINT32_MAX);
	assert_string_equal(bu.nodes[c].name, "main");
	assert_int_equal(bu.nodes[c].next_sibling, UINT32_MAX);
	assert_true(cp_view_incl(&bu, c)[0] == 200);
	/* kernel is inlined: its cost is work's own */
	uint32_t w = child_named(&bu, 0, "work");
	assert_true(cp_view_excl(&bu, w)[0] == 600);
	for (uint32_t i = 0; i < bu.n; i++)
		assert_true(cp_view_incl(&bu, i)[0] <= cp_view_incl(&bu, 0)[0]);
	cp_view_release(&bu);
	cp_profile_release(&p);
}

/* ---- rendering helpers ---- */

static char *render(const struct cp_profile *p, struct cp_report_options *o)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_non_null(f);
	o->summary = 0;
	int rc = cp_report_profile(p, o, f);
	fclose(f);
	if (rc)
		fail_msg("cp_report_profile: %s", cp_error_message());
	return buf;
}

/* The CSV rows' names (field 5) in order, joined by '|'. */
static void csv_names(const char *csv, char *out, size_t len)
{
	out[0] = 0;
	const char *line = strchr(csv, '\n');
	while (line && line[1]) {
		line++;
		const char *c = line;
		for (int i = 0; i < 4 && c; i++)
			c = strchr(c, ',') + 1;
		const char *e = strchr(c, ',');
		strncat(out, c, (size_t)(e - c) < len - strlen(out) - 2 ? (size_t)(e - c) : 0);
		strcat(out, "|");
		line = strchr(line, '\n');
	}
}

/* ---- flat: loops nested under procedures; --flatten 3 ranks them as peers ---- */

static void test_flat_flatten(void **state)
{
	(void)state;
	struct cp_profile p;
	prof_open(&p, 1, 0, CP_PROFILE_ALL_THREADS, NULL, 0);
	struct cp_view fl;
	cp_profile_view(&p, CP_VIEW_FLAT, CP_DB_STAT_SUM, NULL, &fl);
	uint32_t mod = child_named(&fl, 0, "/bin/prog");
	uint32_t file = child_named(&fl, mod, "/src/a.c");
	uint32_t work = child_named(&fl, file, "work");
	uint32_t outer = child_named(&fl, work, "loop at a.c:30-40");
	/* kernel's loop: inlined code is work's own */
	uint32_t inner = child_named(&fl, outer, "loop at k.h:5-7");
	child_named(&fl, inner, "k.h:6");
	child_named(&fl, outer, "a.c:31");
	assert_true(cp_view_incl(&fl, outer)[0] == 600 && cp_view_incl(&fl, inner)[0] == 500);
	cp_view_release(&fl);

	cp_profile_release(&p);
}

static void test_flat_flatten_peers(void **state)
{
	(void)state;
	struct cp_profile p;
	prof_open(&p, 1, 0, CP_PROFILE_ALL_THREADS, NULL, 0);
	struct cp_report_options o;
	cp_report_options_init(&o);
	o.view = CP_VIEW_FLAT;
	o.format = CP_FORMAT_CSV;
	o.flatten = 3;
	o.depth = 1;
	char *csv = render(&p, &o);
	char names[1024];
	csv_names(csv, names, sizeof names);
	assert_string_equal(names, "<total>|a.c:20|loop at a.c:30-40|a.c:21|a.c:22|a.c:51|a.c:60|"
				   "a.c:50|a.c:23|a.c:70|");
	free(csv);
	cp_profile_release(&p);
}

/* ---- hot path ---- */

static void test_hot_path(void **state)
{
	(void)state;
	struct cp_profile p;
	prof_open(&p, 1, 0, CP_PROFILE_ALL_THREADS, NULL, 0);
	struct cp_report_options o;
	cp_report_options_init(&o);
	o.format = CP_FORMAT_CSV;
	o.hot_path = 50;
	char *csv = render(&p, &o);
	char names[1024];
	csv_names(csv, names, sizeof names);
	/* main (100%) > work (60%) > loop (100% of work) > kernel (500 of 600) > inner loop >
	 * k.h:6; the siblings of each hot node are shown, not expanded */
	assert_string_equal(names, "<total>|main|work|loop at a.c:30-40|kernel|loop at k.h:5-7|"
				   "k.h:6|a.c:31|idle|rec|nocpu|");
	/* hot column (10th) */
	assert_non_null(strstr(csv, ",work,/bin/prog,/src/a.c,20,0,1,"));
	assert_non_null(strstr(csv, ",idle,/bin/prog,/src/a.c,22,0,0,"));
	free(csv);
	/* at 70%, work (60% of main) is not hot: the path stops at main */
	o.hot_path = 70;
	csv = render(&p, &o);
	csv_names(csv, names, sizeof names);
	assert_string_equal(names, "<total>|main|work|idle|rec|nocpu|");
	free(csv);
	cp_profile_release(&p);
}

/* ---- statistics over threads: two threads 3:1 ---- */

static void test_stats(void **state)
{
	(void)state;
	struct cp_profile p;
	prof_open(&p, 3, 1, CP_PROFILE_ALL_THREADS, NULL, 0);
	static const int stats[] = {CP_DB_STAT_SUM, CP_DB_STAT_MEAN, CP_DB_STAT_MIN, CP_DB_STAT_MAX,
				    CP_DB_STAT_STDDEV};
	static const double factor[] = {4, 2, 1, 3, 1}; /* of the base values */
	for (int kind = 0; kind < 3; kind++)
		for (size_t s = 0; s < 5; s++) {
			struct cp_view v;
			cp_profile_view(&p, kind, stats[s], NULL, &v);
			assert_true(fabs(cp_view_incl(&v, 0)[0] - 1000 * factor[s]) < 1e-6);
			uint32_t rec;
			if (kind == CP_VIEW_TOP_DOWN) {
				rec = child_named(&v, child_named(&v, 0, "main"), "rec");
				/* the database's statistics */
				const struct cp_db_stat *st = cp_db_stat_get(&p.db, rec, 0, 1);
				assert_true(fabs(cp_view_incl(&v, rec)[0] -
						 cp_db_stat_value(st, stats[s])) < 1e-6);
			} else if (kind == CP_VIEW_BOTTOM_UP) {
				rec = child_named(&v, 0, "rec");
			} else {
				uint32_t f =
				    child_named(&v, child_named(&v, 0, "/bin/prog"), "/src/a.c");
				rec = child_named(&v, f, "rec");
			}
			assert_true(fabs(cp_view_incl(&v, rec)[0] - 200 * factor[s]) < 1e-6);
			assert_true(fabs(cp_view_excl(&v, rec)[0] -
					 (kind == CP_VIEW_TOP_DOWN ? 50 : 200) * factor[s]) < 1e-6);
			cp_view_release(&v);
		}
	/* the threshold is a share of the statistic's total: under max, rec (600 of 3000) is
	 * below 30%, work (1800) above */
	struct cp_report_options o;
	cp_report_options_init(&o);
	o.view = CP_VIEW_BOTTOM_UP;
	o.stat = CP_DB_STAT_MAX;
	o.format = CP_FORMAT_CSV;
	o.threshold = 30;
	o.depth = 1;
	char *csv = render(&p, &o);
	char names[1024];
	csv_names(csv, names, sizeof names);
	assert_string_equal(names, "<total>|main|work|");
	free(csv);
	o.threshold = 15;
	csv = render(&p, &o);
	csv_names(csv, names, sizeof names);
	assert_string_equal(names, "<total>|main|work|idle|rec|");
	free(csv);
	cp_profile_release(&p);
}

/* ---- thread selection ---- */

static void test_thread(void **state)
{
	(void)state;
	struct cp_profile p;
	prof_open(&p, 3, 1, 1, NULL, 0);
	assert_int_equal(p.sum.nthreads, 1);
	assert_true(cp_view_incl(&p.td, 0)[0] == 1000);
	cp_profile_release(&p);
	struct fix f;
	fix_build(&f, 3, 1);
	assert_true(cp_profile_from_db(&p, &f.db, "hand-made", 7, 0, NULL, 0) == CP_ENOENT);
	cp_profile_release(&p);
}

/* ---- derived metrics: division by zero has no value, shown empty, sorted last ---- */

static void test_derived_nan(void **state)
{
	(void)state;
	struct cp_profile p;
	const char *spec[] = {"cpe=cycles/cputime"};
	prof_open(&p, 1, 0, CP_PROFILE_ALL_THREADS, spec, 1);
	uint32_t d = cp_db_metric_find(&p.db, "cpe");
	assert_int_not_equal(d, CP_DB_NONE);
	uint32_t m = child_named(&p.td, 0, "main");
	uint32_t idle = child_named(&p.td, m, "idle");
	uint32_t work = child_named(&p.td, m, "work");
	assert_true(fabs(cp_view_incl(&p.td, work)[d] - 2300.0 / 600) < 1e-9);
	assert_true(cp_view_incl(&p.td, idle)[d] == 0); /* 0 cycles / 200 ns */
	/* a bottom-up view: the ratio of the procedure's own sums */
	struct cp_report_options o;
	cp_report_options_init(&o);
	o.metrics[o.nmetrics++] = "cpe=cycles/cputime";
	o.metrics[o.nmetrics++] = "cputime";
	o.sort_metric = "cpe";
	o.sort = CP_SORT_EXCLUSIVE;
	o.format = CP_FORMAT_CSV;
	o.depth = 2;
	char *csv = render(&p, &o);
	char names[1024];
	csv_names(csv, names, sizeof names);
	/* by exclusive cpe: work 3.83, then idle and rec 0 (by name), nocpu (5/0: no value) last */
	assert_string_equal(names, "<total>|main|work|idle|rec|nocpu|");
	/* main's exclusive cpe: 0/0 -> empty fields (cpe is the 3rd metric, after cputime,
	 * cycles; its 4 columns follow the 8 of those) */
	const char *row = strstr(csv, ",main,");
	assert_non_null(row);
	const char *eol = strchr(row, '\n');
	char line[512];
	snprintf(line, sizeof line, "%.*s", (int)(eol - row), row);
	size_t len = strlen(line);
	assert_true(len > 3 && !strcmp(line + len - 3, ",,,") == 0);
	assert_non_null(strstr(line, ",,")); /* the exclusive cpe and its percentage */
	free(csv);
	/* JSON: null */
	o.format = CP_FORMAT_JSON;
	char *json = render(&p, &o);
	assert_non_null(strstr(json, "\"version\":2"));
	assert_non_null(strstr(json, "null"));
	assert_non_null(strstr(json, "\"kind\":\"derived\",\"formula\":\"cycles/cputime\""));
	free(json);
	/* text: the column is there, the value empty */
	o.format = CP_FORMAT_TEXT;
	char *text = render(&p, &o);
	assert_non_null(strstr(text, "metric cpe,cputime"));
	free(text);
	cp_profile_release(&p);
}

static void test_derived_errors(void **state)
{
	(void)state;
	struct fix f;
	struct cp_profile p;
	const char *bad[] = {"x=cycles/nosuch"};
	fix_build(&f, 1, 0);
	assert_true(cp_profile_from_db(&p, &f.db, "hand-made", -1, 0, bad, 1) < 0);
	assert_non_null(strstr(cp_error_message(), "nosuch"));
	cp_profile_release(&p);
	/* an unknown --metric names the metrics there are */
	prof_open(&p, 1, 0, CP_PROFILE_ALL_THREADS, NULL, 0);
	struct cp_report_options o;
	cp_report_options_init(&o);
	o.metrics[o.nmetrics++] = "nosuch";
	FILE *devnull = fopen("/dev/null", "w");
	assert_true(cp_report_profile(&p, &o, devnull) == CP_ENOENT);
	fclose(devnull);
	assert_non_null(strstr(cp_error_message(), "cputime, cycles"));
	cp_profile_release(&p);
}

/* ---- text: loops, inlined frames, call sites ---- */

static void test_text(void **state)
{
	(void)state;
	struct cp_profile p;
	prof_open(&p, 1, 0, CP_PROFILE_ALL_THREADS, NULL, 0);
	struct cp_report_options o;
	cp_report_options_init(&o);
	o.ascii = 1;
	char *text = render(&p, &o);
	assert_non_null(strstr(text, "work  a.c:20  (prog)"));
	assert_non_null(strstr(text, "loop at a.c:30-40\n"));
	assert_non_null(strstr(text, "kernel [inlined]  a.c:32\n"));
	assert_non_null(strstr(text, "k.h:6\n"));
	assert_non_null(strstr(text, " 60.00%     0.000s  60.00%     0.000s     |- work  a.c:20"));
	assert_non_null(strstr(text, " 20.00%     0.000s   5.00%     0.000s     `- rec  a.c:21"));
	free(text);
	cp_profile_release(&p);
}

/* ---- random databases through every view, statistic, format and option ---- */

static uint64_t rng = 88172645463325252ull;
static uint32_t rnd(uint32_t n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng % n);
}

static void random_db(struct cp_db *db)
{
	cp_db_init(db);
	uint32_t mod = cp_db_module(db, "/bin/r", NULL, 0, CP_DB_MOD_EXE);
	uint32_t files[3] = {cp_db_file(db, "/r/a.c"), cp_db_file(db, "/r/b.h"),
			     cp_db_file(db, "/r/c.c")};
	static const char *const names[] = {"p0", "p1", "p2", "p3", "p4", "p5"};
	uint32_t procs[6];
	for (int i = 0; i < 6; i++) {
		struct cp_db_proc pr = {.name = names[i],
					.module = mod,
					.file = files[i % 3],
					.line = (uint32_t)i * 10,
					.entry = 0x100u * (uint32_t)(i + 1)};
		procs[i] = cp_db_proc(db, &pr);
	}
	uint32_t parents[400];
	size_t np = 1;
	parents[0] = 0;
	for (int i = 0; i < 300; i++) {
		uint32_t parent = parents[rnd((uint32_t)np)];
		uint32_t r = rnd(10);
		struct cp_db_scope sc = {.module = mod, .file = files[rnd(3)], .line = 1 + rnd(40)};
		sc.proc = procs[rnd(6)];
		if (parent == 0 && r == 9)
			sc.kind = CP_DBK_PARTIAL;
		else
			sc.kind = r < 3	  ? CP_DBK_PROC
				  : r < 4 ? CP_DBK_INLINE
				  : r < 6 ? CP_DBK_LOOP
					  : CP_DBK_STMT;
		if (sc.kind == CP_DBK_LOOP) {
			sc.line_lo = sc.line;
			sc.line_hi = sc.line + rnd(5);
			sc.addr = rnd(64);
		}
		uint32_t x = cp_db_scope_child(db, parent, &sc);
		assert_int_not_equal(x, CP_DB_NONE);
		if (sc.kind != CP_DBK_STMT && np < 400)
			parents[np++] = x;
	}
	struct cp_db_metric m = {.name = "m0", .unit = "ns"};
	cp_db_metric_add(db, &m);
	m = (struct cp_db_metric){.name = "m1", .unit = "events"};
	cp_db_metric_add(db, &m);
	for (int t = 0; t < 3; t++) {
		struct cp_db_profile pr = {.pid = 7, .tid = 7 + t, .tidx = (uint32_t)t};
		uint32_t id = cp_db_profile_add(db, &pr);
		for (uint32_t sc = 1; sc < db->nscopes; sc++)
			if (db->scopes[sc].kind == CP_DBK_STMT && rnd(3))
				cp_db_add(db, id, sc, rnd(2), 1 + rnd(1000));
	}
	assert_int_equal(cp_db_finish(db), 0);
}

static void test_random(void **state)
{
	(void)state;
	const char *derived[] = {"d=m1/m0", "e=m0-2*m1"};
	for (int round = 0; round < 4; round++) {
		struct cp_db db;
		struct cp_profile p;
		random_db(&db);
		assert_int_equal(cp_profile_from_db(&p, &db, "random", -1, 0, derived, 2), 0);
		for (int kind = 0; kind < 3; kind++) {
			struct cp_view v;
			cp_profile_view(&p, kind, CP_DB_STAT_SUM, NULL, &v);
			double total = cp_view_incl(&v, 0)[0];
			for (uint32_t i = 0; i < v.n; i++) {
				assert_true(cp_view_incl(&v, i)[0] <= total + 1e-9);
				assert_true(cp_view_excl(&v, i)[0] <=
					    cp_view_incl(&v, i)[0] + 1e-9);
			}
			cp_view_release(&v);
			for (int st = 0; st < 5; st++)
				for (int f = 0; f < 3; f++)
					for (int opt = 0; opt < 4; opt++) {
						struct cp_report_options o;
						cp_report_options_init(&o);
						o.view = kind;
						o.stat = st;
						o.format = f;
						o.flatten = opt == 1 ? 2 : 0;
						o.hot_path = opt == 2 ? 30 : -1;
						o.focus = opt == 3 ? "p3" : NULL;
						o.metrics[o.nmetrics++] = "d";
						o.metrics[o.nmetrics++] = "m0";
						o.sort_metric = opt & 1 ? "e" : NULL;
						o.sort = opt == 3 ? CP_SORT_EXCLUSIVE
								  : CP_SORT_INCLUSIVE;
						o.depth = opt == 2 ? 0 : 6;
						char *buf = NULL;
						size_t len = 0;
						FILE *out = open_memstream(&buf, &len);
						int rc = cp_report_profile(&p, &o, out);
						fclose(out);
						assert_true(rc == 0 ||
							    (rc == CP_ENOENT && o.focus));
						assert_true(rc || len > 0);
						free(buf);
					}
		}
		cp_profile_release(&p);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_top_down),	   cmocka_unit_test(test_bottom_up_recursion),
	    cmocka_unit_test(test_flat_flatten),   cmocka_unit_test(test_flat_flatten_peers),
	    cmocka_unit_test(test_hot_path),	   cmocka_unit_test(test_stats),
	    cmocka_unit_test(test_thread),	   cmocka_unit_test(test_derived_nan),
	    cmocka_unit_test(test_derived_errors), cmocka_unit_test(test_text),
	    cmocka_unit_test(test_random),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
