/* What a database was made from (sources.c, table `source`): the stamps survive a write and
 * both readers, and a stamp changes with the header's bytes even when size and mtime are
 * put back, but not with bytes past the header. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "db/db.h"
#include "db/sources.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[256];

static int setup(void **state)
{
	snprintf(dir, sizeof dir, "/tmp/cp-test-sources-XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[512];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static void check_sources(const struct cp_db *b)
{
	assert_int_equal(b->run.nsources, 2);
	/* read back sorted by name */
	assert_string_equal(b->run.sources[0].name, "1.0.0.thr");
	assert_string_equal(b->run.sources[1].name, "1.0.proc");
	assert_int_equal(b->run.sources[0].size, 4096);
	assert_int_equal(b->run.sources[0].mtime_ns, -5);
	assert_true(b->run.sources[0].head_hash == 0xfedcba9876543210ull);
	assert_true(b->run.sources[1].size == UINT64_MAX);
	assert_int_equal(b->run.sources[1].mtime_ns, 1700000000123456789ll);
	assert_true(b->run.sources[1].head_hash == 1);
}

static void test_roundtrip(void **state)
{
	struct cp_db a, b;
	cp_db_init(&a);
	struct cp_db_source p = {"1.0.proc", UINT64_MAX, 1700000000123456789ll, 1};
	struct cp_db_source t = {"1.0.0.thr", 4096, -5, 0xfedcba9876543210ull};
	cp_db_source_add(&a, &p);
	cp_db_source_add(&a, &t);
	char path[512];
	snprintf(path, sizeof path, "%s/s.db", dir);
	assert_int_equal(cp_db_write(&a, path), 0);
	cp_db_release(&a);
	assert_int_equal(cp_db_read_sources(&b, path), 0);
	check_sources(&b);
	cp_db_release(&b);
	assert_int_equal(cp_db_read(&b, path), 0);
	check_sources(&b);
	cp_db_release(&b);
}

/* Overwrites byte off of the file with x and puts its mtime back. */
static void poke(int dfd, const char *name, off_t off, char x)
{
	struct stat st;
	int fd = openat(dfd, name, O_RDWR);
	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	assert_int_equal(pwrite(fd, &x, 1, off), 1);
	struct timespec ts[2] = {st.st_atim, st.st_mtim};
	assert_int_equal(futimens(fd, ts), 0);
	close(fd);
}

static void test_stamp(void **state)
{
	int dfd = open(dir, O_RDONLY | O_DIRECTORY);
	assert_true(dfd >= 0);
	int fd = openat(dfd, "f.thr", O_CREAT | O_WRONLY | O_TRUNC, 0644);
	static char buf[3 * CP_DB_SOURCE_HEAD];
	memset(buf, 'a', sizeof buf);
	assert_int_equal(write(fd, buf, sizeof buf), (ssize_t)sizeof buf);
	close(fd);
	struct cp_db_source s0, s1, s2;
	assert_int_equal(cp_db_source_stamp(dfd, "f.thr", &s0), 0);
	assert_int_equal(s0.size, sizeof buf);
	poke(dfd, "f.thr", 24, 'b'); /* in the header (`used`) */
	assert_int_equal(cp_db_source_stamp(dfd, "f.thr", &s1), 0);
	assert_int_equal(s1.size, s0.size);
	assert_int_equal(s1.mtime_ns, s0.mtime_ns);
	assert_true(s1.head_hash != s0.head_hash);
	poke(dfd, "f.thr", 2 * CP_DB_SOURCE_HEAD, 'b'); /* past the header */
	assert_int_equal(cp_db_source_stamp(dfd, "f.thr", &s2), 0);
	assert_true(s2.head_hash == s1.head_hash);
	assert_int_equal(cp_db_source_stamp(dfd, "missing.thr", &s2), -1);
	/* a directory without measurement files is never current */
	char path[512];
	snprintf(path, sizeof path, "%s/s.db", dir);
	assert_int_equal(cp_db_sources_current(dir, path), 0);
	close(dfd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_roundtrip),
	    cmocka_unit_test(test_stamp),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
