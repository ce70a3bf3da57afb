/* callpath diff on two hand-made databases of "one program" built in two directories
 * (/a/prog and /b/prog): rows match by module name, procedure and line across the builds;
 * B - A, its Poisson noise sqrt(wA A + s wB B) and their ratio are exact; --normalize total
 * scales B to A's total; the differential folded stacks carry A and B. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "base/error.h"
#include "db/db.h"
#include "report/diff.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* main > work (a.c:20) > a.c:31 holds `work` samples, main > idle (a.c:22) > a.c:60 holds
 * `idle` samples, of 1 ms each. */
static void write_db(const char *path, const char *module, uint64_t work, uint64_t idle)
{
	struct cp_db db;
	cp_db_init(&db);
	uint32_t mod = cp_db_module(&db, module, NULL, 0, CP_DB_MOD_EXE);
	uint32_t fa = cp_db_file(&db, "/src/a.c");
	const char *names[] = {"main", "work", "idle"};
	uint32_t pr[3], sc[3];
	for (int i = 0; i < 3; i++) {
		struct cp_db_proc p = {.name = names[i],
				       .module = mod,
				       .file = fa,
				       .line = (uint32_t)(10 * i + 1),
				       .entry = 0x100u * (i + 1)};
		pr[i] = cp_db_proc(&db, &p);
		struct cp_db_scope s = {.kind = CP_DBK_PROC,
					.proc = pr[i],
					.module = mod,
					.file = i ? fa : CP_DB_NONE,
					.line = i ? 18u + 2u * i : 0};
		sc[i] = cp_db_scope_child(&db, i ? sc[0] : 0, &s);
	}
	struct cp_db_scope st = {
	    .kind = CP_DBK_STMT, .proc = pr[1], .module = mod, .file = fa, .line = 31};
	uint32_t wst = cp_db_scope_child(&db, sc[1], &st);
	st.proc = pr[2], st.line = 60;
	uint32_t ist = cp_db_scope_child(&db, sc[2], &st);
	struct cp_db_metric m = {.name = "cputime", .unit = "ns", .period = 1000000};
	uint32_t cpu = cp_db_metric_add(&db, &m);
	struct cp_db_profile p = {.pid = 1, .tid = 1, .tidx = 0, .rank = -1};
	p.samples[cpu] = work + idle;
	uint32_t id = cp_db_profile_add(&db, &p);
	cp_db_add(&db, id, wst, cpu, 1e6 * (double)work);
	cp_db_add(&db, id, ist, cpu, 1e6 * (double)idle);
	assert_int_equal(cp_db_finish(&db), 0);
	assert_int_equal(cp_db_write(&db, path), 0);
	cp_db_release(&db);
}

static char dir[64];
static char pa[96], pb[96];

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof dir, "/tmp/cp-test-diff.XXXXXX");
	assert_non_null(mkdtemp(dir));
	snprintf(pa, sizeof pa, "%s/a.db", dir);
	snprintf(pb, sizeof pb, "%s/b.db", dir);
	write_db(pa, "/a/prog", 100, 300);
	write_db(pb, "/b/prog", 400, 400);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	unlink(pa);
	unlink(pb);
	rmdir(dir);
	return 0;
}

static char *run(struct cp_diff_options *o)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int rc = cp_diff_run(pa, pb, o, f);
	fclose(f);
	if (rc)
		fprintf(stderr, "%s\n", cp_error_message());
	assert_int_equal(rc, 0);
	return buf;
}

/* The CSV row of the procedure `name`: its fields after "name,module,file,...". */
static void csv_row(const char *csv, const char *name, double *incl, size_t n)
{
	char key[64];
	snprintf(key, sizeof key, ",procedure,%s,prog,", name);
	const char *row = strstr(csv, key);
	assert_non_null(row);
	/* from the comma before kind: kind,name,module,file,line,line_end,hot, then 4 values
	 * per metric */
	const char *c = row;
	for (int commas = 0; commas < 8; c++)
		commas += *c == ',';
	for (size_t m = 0; m < n; m++) {
		incl[m] = strtod(c, (char **)&c);
		for (int k = 0; k < 4 && *c; c++)
			k += *c == ','; /* skip _inclusive_pct, _exclusive, _exclusive_pct */
	}
}

static void test_absolute(void **state)
{
	(void)state;
	struct cp_diff_options o;
	cp_diff_options_init(&o);
	o.report.format = CP_FORMAT_CSV;
	char *csv = run(&o);
	/* one row per procedure: the two builds' modules matched by name */
	assert_non_null(strstr(csv, "cputime.a_inclusive"));
	assert_null(strstr(strstr(csv, ",procedure,work,") + 1, ",procedure,work,"));
	double v[5];
	csv_row(csv, "work", v, 5);
	assert_true(fabs(v[0] - 100e6) < 1 && fabs(v[1] - 400e6) < 1);
	assert_true(fabs(v[2] - 300e6) < 1);
	double noise = sqrt(1e6 * 100e6 + 1e6 * 400e6); /* sqrt(500) samples of 1 ms */
	assert_true(fabs(v[3] - noise) < 1e-6 * noise);
	assert_true(fabs(v[4] - 300e6 / noise) < 1e-6);
	/* the regression first: work before idle */
	assert_true(strstr(csv, ",procedure,work,") < strstr(csv, ",procedure,idle,"));
	free(csv);
}

static void test_total(void **state)
{
	(void)state;
	struct cp_diff_options o;
	cp_diff_options_init(&o);
	o.report.format = CP_FORMAT_CSV;
	o.normalize = CP_DIFF_TOTAL;
	char *csv = run(&o);
	double v[5], s = 400.0 / 800.0; /* B's total scaled to A's */
	csv_row(csv, "work", v, 5);
	assert_true(fabs(v[1] - s * 400e6) < 1);
	assert_true(fabs(v[3] - sqrt(1e6 * 100e6 + s * 1e6 * s * 400e6)) < 1);
	csv_row(csv, "idle", v, 5);
	assert_true(fabs(v[2] - (s * 400e6 - 300e6)) < 1); /* idle's share went down */
	free(csv);
}

static void test_folded(void **state)
{
	(void)state;
	struct cp_diff_options o;
	cp_diff_options_init(&o);
	o.folded = 1;
	char *out = run(&o);
	assert_non_null(strstr(out, "main;work 100000000 400000000\n"));
	assert_non_null(strstr(out, "main;idle 300000000 400000000\n"));
	free(out);
}

static void test_missing(void **state)
{
	(void)state;
	struct cp_diff_options o;
	cp_diff_options_init(&o);
	FILE *f = fopen("/dev/null", "w");
	assert_int_not_equal(cp_diff_run(pa, "/nonexistent/b.db", &o, f), 0);
	assert_non_null(strstr(cp_error_message(), "B (/nonexistent/b.db)"));
	fclose(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_absolute),
	    cmocka_unit_test(test_total),
	    cmocka_unit_test(test_folded),
	    cmocka_unit_test(test_missing),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
