/* The profile database file (db-sqlite*.c): round trip of every table, the documented SQL
 * query run by the sqlite3 CLI, errors on foreign, truncated, corrupt and newer files,
 * atomic replacement. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "base/error.h"
#include "db-build.h"
#include "db/db.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static char dir[256];

static int setup(void **state)
{
	snprintf(dir, sizeof dir, "/tmp/cp-test-sqlite-XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	return 0;
}

static int teardown(void **state)
{
	char cmd[512];
	if (getenv("CP_TEST_KEEP"))
		return 0;
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static const char *in_dir(const char *name)
{
	static char buf[16][512];
	static int k;
	k = (k + 1) % 16;
	snprintf(buf[k], sizeof buf[k], "%s/%s", dir, name);
	return buf[k];
}

/* The test database plus a statement directly in main's loop, a derived metric with a
 * division by zero, run metadata. */
static void build(struct cp_db *db, struct test_db_ids *t, uint32_t *sl)
{
	test_db_build(db, t);
	*sl = test_db_scope(db, t->sloop1, CP_DBK_STMT, t->pmain, t->mod, t->fm, 15, 0, 0, 0x1020);
	cp_db_add(db, t->prof[0], *sl, t->cputime, 5);
	cp_db_add(db, t->prof[0], *sl, t->cputime, 0.25); /* not an integer: stored as a double */
	db->run.command = cp_db_intern(db, "./app 1");
	db->run.host = cp_db_intern(db, "node1");
	db->run.measurement_dir = cp_db_intern(db, "/tmp/callpath-app-1");
	db->run.callpath_version = cp_db_intern(db, "0.1.0");
	db->run.start_ns = 1700000000000000000ull;
	db->run.duration_s = 1.5;
	db->run.nprocs = 1;
	cp_db_note_add(db, "a note");
	cp_db_warning_add(db, "a warning");
	assert_true(cp_db_derived_add(db, "cpn", "cycles / cputime", "", "per ns") >= 0);
	assert_int_equal(cp_db_finish(db), 0);
}

static void assert_stat_equal(const struct cp_db_stat *a, const struct cp_db_stat *b)
{
	assert_int_equal(a->count, b->count);
	assert_int_equal(a->argmax, b->argmax);
	const double x[5] = {a->sum, a->mean, a->min, a->max, a->stddev};
	const double y[5] = {b->sum, b->mean, b->min, b->max, b->stddev};
	for (int i = 0; i < 5; i++)
		assert_true((isnan(x[i]) && isnan(y[i])) || x[i] == y[i]);
}

static void test_roundtrip(void **state)
{
	struct cp_db a, b;
	struct test_db_ids t;
	uint32_t sl;
	build(&a, &t, &sl);
	const char *path = in_dir("rt.db");
	assert_int_equal(cp_db_write(&a, path), 0);
	assert_true(cp_db_is_database(path));
	assert_int_equal(cp_db_read(&b, path), 0);
	assert_true(b.finished);
	/* structure */
	assert_int_equal(b.nmodules, a.nmodules);
	assert_string_equal(b.modules[0].path, "/bin/app");
	assert_string_equal(b.modules[0].name, "app");
	assert_int_equal(b.modules[0].build_id_len, 4);
	assert_memory_equal(b.modules[0].build_id, a.modules[0].build_id, 4);
	assert_int_equal(b.modules[0].flags, CP_DB_MOD_EXE);
	assert_int_equal(b.nfiles, a.nfiles);
	assert_int_equal(b.nprocs, a.nprocs);
	assert_string_equal(b.procs[t.pwork].name, "work");
	assert_int_equal(b.procs[t.pwork].entry, 0x2000);
	assert_int_equal(b.procs[t.pwork].line, 28);
	assert_int_equal(b.nscopes, a.nscopes);
	for (size_t i = 0; i < a.nscopes; i++) {
		const struct cp_db_scope *x = &a.scopes[i], *y = &b.scopes[i];
		assert_int_equal(x->parent, y->parent);
		assert_int_equal(x->first_child, y->first_child);
		assert_int_equal(x->next_sibling, y->next_sibling);
		assert_int_equal(x->kind, y->kind);
		assert_int_equal(x->depth, y->depth);
		assert_int_equal(x->proc, y->proc);
		assert_int_equal(x->module, y->module);
		assert_int_equal(x->file, y->file);
		assert_int_equal(x->line, y->line);
		assert_int_equal(x->line_lo, y->line_lo);
		assert_int_equal(x->line_hi, y->line_hi);
		assert_int_equal(x->addr, y->addr);
	}
	/* metrics */
	assert_int_equal(b.nmetrics, 3);
	assert_int_equal(cp_db_nraw(&b), 2);
	assert_string_equal(b.metrics[2].name, "cpn");
	assert_string_equal(b.metrics[2].formula, "cycles / cputime");
	assert_int_equal(b.metrics[2].kind, CP_DB_METRIC_DERIVED);
	assert_string_equal(b.metrics[0].unit, "ns");
	assert_string_equal(b.metrics[0].description, "CPU time");
	assert_null(b.metrics[1].description);
	assert_int_equal(b.metrics[0].period, 1000000);
	assert_int_equal(b.metrics[0].samples, 42);
	/* profiles */
	assert_int_equal(b.nprofiles, 3);
	assert_int_equal(b.profiles[1].tid, 101);
	assert_int_equal(b.profiles[1].rank, -1);
	assert_string_equal(b.profiles[1].thread_name, "worker");
	assert_string_equal(b.profiles[1].host, "node1");
	assert_int_equal(b.profiles[1].samples[0], 30);
	assert_int_equal(b.profiles[2].start_ns, 3000000000ull);
	for (size_t p = 0; p < 3; p++) {
		assert_int_equal(b.pvalues[p].n, a.pvalues[p].n);
		for (size_t i = 0; i < a.pvalues[p].n; i++) {
			assert_int_equal(b.pvalues[p].v[i].scope, a.pvalues[p].v[i].scope);
			assert_int_equal(b.pvalues[p].v[i].metric, a.pvalues[p].v[i].metric);
			assert_true(b.pvalues[p].v[i].value == a.pvalues[p].v[i].value);
		}
	}
	/* stats, NaN included (cpn at main's statements: 0 cycles / 5.25 ns = 0; self of the
	 * loop: 0 / 5.25) */
	for (size_t s = 0; s < a.nscopes; s++)
		for (size_t m = 0; m < a.nmetrics; m++)
			for (int in = 0; in < 2; in++)
				assert_stat_equal(cp_db_stat_get(&a, (uint32_t)s, (uint32_t)m, in),
						  cp_db_stat_get(&b, (uint32_t)s, (uint32_t)m, in));
	/* run metadata */
	assert_string_equal(b.run.command, "./app 1");
	assert_string_equal(b.run.host, "node1");
	assert_string_equal(b.run.measurement_dir, "/tmp/callpath-app-1");
	assert_string_equal(b.run.callpath_version, "0.1.0");
	assert_int_equal(b.run.start_ns, 1700000000000000000ull);
	assert_true(b.run.duration_s == 1.5);
	assert_int_equal(b.run.nprocs, 1);
	assert_int_equal(b.run.nnotes, 1);
	assert_string_equal(b.run.notes[0], "a note");
	assert_int_equal(b.run.nwarnings, 1);
	/* a database read back takes new derived metrics and can be written again */
	int d = cp_db_derived_add(&b, "npc", "cputime / cycles", "", NULL);
	assert_true(d >= 0);
	assert_true(isnan(cp_db_stat_get(&b, sl, (uint32_t)d, 0)->sum)); /* 5.25 / 0 */
	assert_true(cp_db_stat_get(&b, t.sstmt, (uint32_t)d, 0)->max == 0.5);
	assert_int_equal(cp_db_write(&b, path), 0);
	cp_db_release(&b);
	assert_int_equal(cp_db_read(&b, path), 0);
	assert_int_equal(b.nmetrics, 4);
	assert_true(isnan(cp_db_stat_get(&b, sl, (uint32_t)d, 0)->sum));
	cp_db_release(&b);
	cp_db_release(&a);
	/* the mode the umask allows, not mkstemp's 0600 */
	struct stat sb;
	const char *fresh = in_dir("fresh.db");
	mode_t mask = umask(022);
	cp_db_init(&a);
	assert_int_equal(cp_db_write(&a, fresh), 0);
	cp_db_release(&a);
	umask(mask);
	assert_int_equal(stat(fresh, &sb), 0);
	assert_int_equal(sb.st_mode & 0777, 0644);
	/* no temporary file left behind */
	DIR *dp = opendir(dir);
	struct dirent *e;
	while ((e = readdir(dp)))
		assert_null(strstr(e->d_name, ".tmp"));
	closedir(dp);
}

static void test_empty_roundtrip(void **state)
{
	struct cp_db a, b;
	cp_db_init(&a);
	const char *path = in_dir("empty.db");
	assert_int_equal(cp_db_write(&a, path), 0);
	assert_int_equal(cp_db_read(&b, path), 0);
	assert_int_equal(b.nscopes, 1);
	assert_int_equal(b.nmetrics, 0);
	assert_int_equal(b.nprofiles, 0);
	cp_db_release(&b);
	cp_db_release(&a);
}

/* The query under marker (e.g. "<!-- top-loops-query -->") in docs/format.md. */
static char *docs_query(const char *marker)
{
	const char *src = getenv("CP_SOURCE_DIR");
	char path[512];
	snprintf(path, sizeof path, "%s/docs/format.md", src ? src : "../..");
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	static char text[1 << 20];
	size_t n = fread(text, 1, sizeof text - 1, f);
	fclose(f);
	text[n] = 0;
	char *m = strstr(text, marker);
	assert_non_null(m);
	char *start = strstr(m, "```sql\n");
	assert_non_null(start);
	start += 7;
	char *end = strstr(start, "```");
	assert_non_null(end);
	return strndup(start, (size_t)(end - start));
}

static void test_docs_query(void **state)
{
	if (system("sqlite3 -version >/dev/null 2>&1")) {
		print_message("sqlite3 CLI not installed (Debian: sqlite3): skipping\n");
		skip();
	}
	struct cp_db a;
	struct test_db_ids t;
	uint32_t sl;
	build(&a, &t, &sl);
	assert_true(cp_db_derived_add(&a, "npc", "cputime / cycles", "", NULL) >= 0);
	const char *path = in_dir("q.db"), *qpath = in_dir("q.sql");
	assert_int_equal(cp_db_write(&a, path), 0);
	cp_db_release(&a);
	char *q = docs_query("<!-- top-loops-query -->");
	FILE *f = fopen(qpath, "w");
	fputs(q, f);
	fclose(f);
	free(q);
	char cmd[1200];
	snprintf(cmd, sizeof cmd, "sqlite3 -bail -batch '%s' < '%s'", path, qpath);
	FILE *p = popen(cmd, "r");
	char out[4096];
	size_t n = fread(out, 1, sizeof out - 1, p);
	out[n] = 0;
	assert_int_equal(pclose(p), 0);
	print_message("%s", out);
	/* the loop in work() holds 40 ns of its own; main's loop 5.25 of its own (the call to
	 * work() inside it is not its own) and 45.25 inclusive */
	char *l1 = strstr(out, "loop at w.c:30-40|work|40.0|40.0");
	char *l2 = strstr(out, "loop at m.c:10-20|main|5.25|45.25");
	assert_non_null(l1);
	assert_non_null(l2);
	assert_true(l1 < l2);
	/* NaN is NULL: the derived metric at main's loop has no cycles, so 0; the scope_values
	 * view lists derived metrics too */
	snprintf(cmd, sizeof cmd,
		 "sqlite3 -batch '%s' \"SELECT count(*) FROM scope_values WHERE metric = 'cpn'\"",
		 path);
	p = popen(cmd, "r");
	n = fread(out, 1, sizeof out - 1, p);
	out[n] = 0;
	pclose(p);
	assert_true(atoi(out) > 0);
	/* 5.25 ns / 0 cycles at main's loop statement: no value, NULL */
	snprintf(
	    cmd, sizeof cmd,
	    "sqlite3 -batch '%s' \"SELECT coalesce(excl_sum, 'null') FROM value v JOIN metric m "
	    "ON m.id = v.metric WHERE m.name = 'npc' AND v.scope = %u\"",
	    path, sl);
	p = popen(cmd, "r");
	n = fread(out, 1, sizeof out - 1, p);
	out[n] = 0;
	pclose(p);
	assert_string_equal(out, "null\n");
	/* the calling context of a scope */
	q = docs_query("<!-- scope-path-query -->");
	f = fopen(qpath, "w");
	fprintf(f, ".param set :id %u\n%s", t.sstmt, q);
	fclose(f);
	free(q);
	snprintf(cmd, sizeof cmd, "sqlite3 -bail -batch '%s' < '%s'", path, qpath);
	p = popen(cmd, "r");
	n = fread(out, 1, sizeof out - 1, p);
	out[n] = 0;
	assert_int_equal(pclose(p), 0);
	assert_string_equal(out, "main > loop at m.c:10-20 > work > loop at w.c:30-40 > w.c:33\n");
}

static void copy_prefix(const char *from, const char *to, long len)
{
	FILE *a = fopen(from, "rb"), *b = fopen(to, "wb");
	assert_non_null(a);
	assert_non_null(b);
	char buf[4096];
	size_t n;
	while (len > 0 && (n = fread(buf, 1, sizeof buf, a)) > 0) {
		if ((long)n > len)
			n = (size_t)len;
		fwrite(buf, 1, n, b);
		len -= (long)n;
	}
	fclose(a);
	fclose(b);
}

static void expect_format_error(const char *path, const char *what)
{
	struct cp_db b;
	cp_error_clear();
	int rc = cp_db_read(&b, path);
	if (rc != CP_EFORMAT)
		print_message("%s: rc %d: %s\n", path, rc, cp_error_message());
	assert_int_equal(rc, CP_EFORMAT);
	if (what && !strstr(cp_error_message(), what))
		print_message("message: %s\n", cp_error_message());
	if (what)
		assert_non_null(strstr(cp_error_message(), what));
	cp_db_release(&b);
}

static void test_bad_files(void **state)
{
	struct cp_db a;
	struct test_db_ids t;
	uint32_t sl;
	build(&a, &t, &sl);
	const char *path = in_dir("good.db");
	assert_int_equal(cp_db_write(&a, path), 0);
	cp_db_release(&a);
	struct stat st;
	assert_int_equal(stat(path, &st), 0);
	/* truncated copies at many lengths */
	const char *cut = in_dir("cut.db");
	for (long len = 0; len < st.st_size; len += st.st_size / 13 + 1) {
		copy_prefix(path, cut, len);
		expect_format_error(cut, len < 100 ? "not a callpath database" : NULL);
	}
	/* a random file */
	const char *rnd = in_dir("random.db");
	FILE *f = fopen(rnd, "wb");
	srand(42);
	for (int i = 0; i < 20000; i++)
		fputc(rand() & 0xff, f);
	fclose(f);
	expect_format_error(rnd, "not a callpath database");
	assert_false(cp_db_is_database(rnd));
	/* corrupt pages: random bytes over the file after the header */
	const char *bad = in_dir("bad.db");
	for (int round = 0; round < 20; round++) {
		copy_prefix(path, bad, st.st_size);
		f = fopen(bad, "r+b");
		for (int k = 0; k < 8; k++) {
			fseek(f, 100 + rand() % (st.st_size - 100), SEEK_SET);
			for (int i = 0; i < 64; i++)
				fputc(rand() & 0xff, f);
		}
		fclose(f);
		struct cp_db b;
		int rc = cp_db_read(&b, bad); /* may survive if only free space was hit */
		assert_true(rc == 0 || rc == CP_EFORMAT);
		cp_db_release(&b);
	}
	/* another SQLite file */
	char cmd[1024];
	const char *other = in_dir("other.db");
	snprintf(cmd, sizeof cmd, "sqlite3 '%s' 'CREATE TABLE t(x); INSERT INTO t VALUES (1);'",
		 other);
	if (!system(cmd)) {
		expect_format_error(other, "not a callpath database");
		assert_false(cp_db_is_database(other));
	}
	/* a newer schema */
	const char *newer = in_dir("newer.db");
	copy_prefix(path, newer, st.st_size);
	snprintf(cmd, sizeof cmd, "sqlite3 '%s' 'PRAGMA user_version = %d'", newer,
		 CP_DB_SCHEMA_VERSION + 1);
	char want[64];
	snprintf(want, sizeof want, "schema version %d, this callpath reads %d",
		 CP_DB_SCHEMA_VERSION + 1, CP_DB_SCHEMA_VERSION);
	if (!system(cmd))
		expect_format_error(newer, want);
	/* inconsistent rows */
	const char *incons = in_dir("incons.db");
	static const char *const edits[] = {
	    "UPDATE scope SET parent = 99999 WHERE id = 3",
	    "UPDATE scope SET parent = id WHERE id = 3",
	    "UPDATE metric SET formula = 'cycles / nosuch' WHERE name = 'cpn'",
	    "UPDATE value SET metric = 77 WHERE rowid IN (SELECT scope FROM value LIMIT 1)",
	    "UPDATE profile_values SET data = x'00112233' WHERE profile = 1",
	    "UPDATE profile_values SET nvalues = 1 WHERE profile = 1",
	    "UPDATE procedure SET module = 5",
	    "DELETE FROM metric WHERE name = 'cputime'",
	    "DROP TABLE scope",
	    "DROP TABLE meta; CREATE VIEW meta AS SELECT 'command' AS key, 'x' AS value",
	};
	for (size_t i = 0; i < sizeof edits / sizeof edits[0]; i++) {
		copy_prefix(path, incons, st.st_size);
		snprintf(cmd, sizeof cmd, "sqlite3 '%s' \"%s\"", incons, edits[i]);
		if (system(cmd))
			continue;
		expect_format_error(incons, "truncated or corrupt");
	}
	/* a missing file */
	struct cp_db b;
	assert_int_equal(cp_db_read(&b, in_dir("nosuch.db")), CP_ENOENT);
	cp_db_release(&b);
	assert_false(cp_db_is_database(in_dir("nosuch.db")));
	/* a database the reader would refuse is not written */
	cp_db_init(&a);
	test_db_scope(&a, 0, CP_DBK_PROC, 3, CP_DB_NONE, CP_DB_NONE, 1, 0, 0, 0);
	assert_int_equal(cp_db_write(&a, in_dir("dangling.db")), CP_EINTERNAL);
	assert_non_null(strstr(cp_error_message(), "scope 1 refers to a missing procedure"));
	assert_int_equal(access(in_dir("dangling.db"), F_OK), -1);
	cp_db_release(&a);
	/* an unwritable place */
	cp_db_init(&a);
	assert_int_equal(cp_db_write(&a, "/nonexistent-dir/x.db"), CP_EIO);
	cp_db_release(&a);
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Size and speed figures (printed, not asserted): 100k scopes, 3 metrics, 8 profiles. */
static void test_scale(void **state)
{
	struct cp_db a, b;
	cp_db_init(&a);
	struct cp_db_metric m = {.name = "cputime", .unit = "ns"};
	uint32_t met[3];
	met[0] = cp_db_metric_add(&a, &m);
	m.name = "cycles";
	met[1] = cp_db_metric_add(&a, &m);
	m.name = "instructions";
	met[2] = cp_db_metric_add(&a, &m);
	struct cp_db_profile pr = {.rank = -1};
	for (int i = 0; i < 8; i++)
		cp_db_profile_add(&a, &pr);
	cp_db_module(&a, "/bin/app", NULL, 0, 0);
	cp_db_file(&a, "/src/app.c");
	char name[32];
	for (int i = 0; i < 100; i++) {
		snprintf(name, sizeof name, "f%d", i);
		struct cp_db_proc pc = {.name = name, .entry = (uint64_t)i, .file = 0};
		cp_db_proc(&a, &pc);
	}
	uint32_t parent = 0;
	srand(1);
#ifdef __SANITIZE_ADDRESS__
	const uint32_t nscopes = 20000; /* the figures only mean something without ASan */
#else
	const uint32_t nscopes = 100000;
#endif
	for (uint32_t i = 0; i < nscopes; i++) {
		uint32_t s = test_db_scope(&a, parent, i % 7 ? CP_DBK_STMT : CP_DBK_PROC, i % 100,
					   0, 0, i, 0, 0, i);
		parent = i % 7 ? parent : s;
		if (i % 1000 == 0)
			parent = 0;
		for (int p = 0; p < 8; p++)
			cp_db_add(&a, (uint32_t)p, s, met[rand() % 3], 1 + rand() % 1000);
	}
	double t0 = now();
	cp_db_finish(&a);
	double t1 = now();
	const char *path = in_dir("scale.db");
	assert_int_equal(cp_db_write(&a, path), 0);
	double t2 = now();
	int rc = cp_db_read(&b, path);
	if (rc)
		print_message("%s\n", cp_error_message());
	assert_int_equal(rc, 0);
	double t3 = now();
	struct stat st;
	stat(path, &st);
	print_message(
	    "%zu scopes (CPU time): finish %.3f s, write %.3f s, read %.3f s, %lld bytes\n",
	    a.nscopes, t1 - t0, t2 - t1, t3 - t2, (long long)st.st_size);
	assert_true(cp_db_stat_get(&a, 0, met[0], 1)->sum == cp_db_stat_get(&b, 0, met[0], 1)->sum);
	cp_db_release(&a);
	cp_db_release(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_roundtrip),  cmocka_unit_test(test_empty_roundtrip),
	    cmocka_unit_test(test_docs_query), cmocka_unit_test(test_bad_files),
	    cmocka_unit_test(test_scale),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
