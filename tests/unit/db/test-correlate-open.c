/* cp_analyze_dir and cp_profile_open on a hand-built measurement directory: a module
 * without structure (unknown frames, one warning), metrics mapped by name across process
 * images, DIR/callpath.db written, reused while up to date, redone when a measurement file
 * is newer, --metric formulas added either way, no_write respected. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "../format/mf-build.h"
#include "base/error.h"
#include "db/analyze.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[256];
static char dbpath[300];

static void put_file(const char *name, struct mfb *b)
{
	((struct cp_mf_header *)b->buf)->used = b->len;
	char path[512];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(b->buf, 1, b->len, f), b->len);
	fclose(f);
	free(b->buf);
}

/* Two process images: 100 (metric "cputime") and 101, a fork child measuring
 * ("realtime", "cputime") -- the same metric at another index. */
static void make_measurement(void)
{
	struct mfb b;
	static const char *const m1[] = {"cputime"};
	static const char *const m2[] = {"realtime", "cputime"};
	mfb_proc(&b, 100, 0, 1, m1);
	mfb_module(&b, 0, "/nonexistent/callpath-test/app", 0x400000);
	put_file("100.0.proc", &b);
	mfb_thread(&b, 100, 0, 0, 1);
	uint64_t v = 7;
	uint32_t c = mfb_node(&b, 0, CP_MF_NODE_CALL, 0, 0x1234, NULL);
	mfb_node(&b, c, CP_MF_NODE_PC, 0, 0x2000, &v);
	put_file("100.0.0.thr", &b);

	mfb_proc(&b, 101, 0, 2, m2);
	((struct cp_mf_process *)b.buf)->h.flags |= CP_MF_FORK_CHILD;
	((struct cp_mf_process *)b.buf)->ppid = 100;
	mfb_module(&b, 0, "/nonexistent/callpath-test/app", 0x400000);
	put_file("101.0.proc", &b);
	mfb_thread(&b, 101, 0, 0, 2);
	uint64_t w[2] = {50, 5};
	c = mfb_node(&b, 0, CP_MF_NODE_CALL, 0, 0x1234, NULL);
	mfb_node(&b, c, CP_MF_NODE_PC, 0, 0x3000, w);
	put_file("101.0.0.thr", &b);
}

static int setup(void **state)
{
	(void)state;
	assert_int_equal(mfb_tmpdir(dir, "cp-test-open"), 0);
	snprintf(dbpath, sizeof dbpath, "%s/%s", dir, CP_DB_DEFAULT_NAME);
	make_measurement();
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	return mfb_rmdir(dir);
}

static double stat_sum(const struct cp_db *db, uint32_t scope, const char *metric, int incl)
{
	uint32_t m = cp_db_metric_find(db, metric);
	assert_int_not_equal(m, CP_DB_NONE);
	return cp_db_stat_get(db, scope, m, incl)->sum;
}

static void test_analyze_dir(void **state)
{
	(void)state;
	struct cp_analyze_options o;
	cp_analyze_options_init(&o);
	o.progress = NULL;
	struct cp_db db;
	assert_int_equal(cp_analyze_dir(dir, &o, &db), 0);
	assert_int_equal(db.nprofiles, 2);
	assert_int_equal(db.run.nprocs, 2);
	assert_int_equal(db.run.nforked, 1);
	assert_true(stat_sum(&db, 0, "cputime", 1) == 12.0); /* 7 + 5, mapped by name */
	assert_true(stat_sum(&db, 0, "realtime", 1) == 50.0);
	/* no structure: one unknown frame "[app]" holding the costs, one warning */
	uint32_t f = db.scopes[0].first_child;
	assert_int_not_equal(f, CP_DB_NONE);
	assert_string_equal(db.procs[db.scopes[f].proc].name, "[app]");
	assert_int_equal(db.scopes[f].next_sibling, CP_DB_NONE);
	assert_int_equal(db.scopes[f].first_child, CP_DB_NONE);
	size_t nwarn = 0;
	for (size_t i = 0; i < db.run.nwarnings; i++)
		nwarn += strstr(db.run.warnings[i],
				"no structure for /nonexistent/callpath-test/app") != NULL;
	assert_int_equal(nwarn, 1);
	int fork_flags = 0;
	for (size_t i = 0; i < db.nprofiles; i++)
		fork_flags += (db.profiles[i].flags & CP_DB_PROF_FORK_CHILD) != 0;
	assert_int_equal(fork_flags, 1);
	cp_db_release(&db);
}

static void test_profile_open(void **state)
{
	(void)state;
	struct cp_analyze_options o;
	cp_analyze_options_init(&o);
	o.progress = NULL;
	const char *derived[] = {"twice=cputime*2"};
	o.derived = derived;
	o.nderived = 1;
	struct cp_db db;
	unlink(dbpath);
	assert_int_equal(cp_profile_open(dir, &o, &db), 0);
	assert_true(stat_sum(&db, 0, "twice", 1) == 24.0);
	cp_db_release(&db);
	struct stat st1;
	if (stat(dbpath, &st1)) {
		cp_error_clear();
		skip(); /* the database writer is not built yet */
	}
	/* up to date: read back, with the derived metric added again (not saved) */
	assert_int_equal(cp_profile_open(dir, &o, &db), 0);
	assert_int_equal(db.nprofiles, 2);
	assert_true(stat_sum(&db, 0, "twice", 1) == 24.0);
	cp_db_release(&db);
	struct stat st2;
	assert_int_equal(stat(dbpath, &st2), 0);
	assert_true(st2.st_mtim.tv_sec == st1.st_mtim.tv_sec &&
		    st2.st_mtim.tv_nsec == st1.st_mtim.tv_nsec);
	/* the database file itself */
	assert_int_equal(cp_profile_open(dbpath, &o, &db), 0);
	assert_int_equal(db.nprofiles, 2);
	cp_db_release(&db);
	/* a measurement file newer than the database: analyzed again and saved */
	char thr[512];
	snprintf(thr, sizeof thr, "%s/100.0.0.thr", dir);
	struct timespec ts[2] = {{st1.st_mtim.tv_sec + 10, 0}, {st1.st_mtim.tv_sec + 10, 0}};
	assert_int_equal(utimensat(AT_FDCWD, thr, ts, 0), 0);
	assert_int_equal(cp_profile_open(dir, &o, &db), 0);
	cp_db_release(&db);
	struct stat st3;
	assert_int_equal(stat(dbpath, &st3), 0);
	assert_true(st3.st_ino != st1.st_ino || st3.st_mtim.tv_sec != st1.st_mtim.tv_sec ||
		    st3.st_mtim.tv_nsec != st1.st_mtim.tv_nsec);
	/* no_write */
	unlink(dbpath);
	o.no_write = 1;
	assert_int_equal(cp_profile_open(dir, &o, &db), 0);
	cp_db_release(&db);
	assert_int_not_equal(access(dbpath, F_OK), 0);
	/* errors */
	char missing[512];
	snprintf(missing, sizeof missing, "%s/missing", dir);
	assert_int_equal(cp_profile_open(missing, &o, &db), CP_ENOENT);
	o.derived = (const char *[]){"bad=cputime*"};
	assert_true(cp_profile_open(dir, &o, &db) < 0);
	cp_error_clear();
}

/* A thread file whose process file is missing, and a process file whose name does not
 * match its contents: errors naming the file. */
static void test_listing_errors(void **state)
{
	(void)state;
	struct cp_analyze_options o;
	cp_analyze_options_init(&o);
	o.progress = NULL;
	struct cp_db db;
	char from[512], to[512];
	snprintf(from, sizeof from, "%s/101.0.0.thr", dir);
	snprintf(to, sizeof to, "%s/102.0.0.thr", dir);
	assert_int_equal(rename(from, to), 0);
	assert_int_equal(cp_analyze_dir(dir, &o, &db), CP_EFORMAT);
	assert_non_null(strstr(cp_error_message(), "102.0.0.thr: no process file 102.0.proc"));
	assert_int_equal(rename(to, from), 0);
	snprintf(from, sizeof from, "%s/101.0.proc", dir);
	snprintf(to, sizeof to, "%s/103.0.proc", dir);
	assert_int_equal(rename(from, to), 0);
	assert_int_equal(cp_analyze_dir(dir, &o, &db), CP_EFORMAT);
	cp_error_clear();
	assert_int_equal(rename(to, from), 0);
	assert_int_equal(cp_analyze_dir(dir, &o, &db), 0);
	cp_db_release(&db);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_analyze_dir),
	    cmocka_unit_test(test_listing_errors),
	    cmocka_unit_test(test_profile_open),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
