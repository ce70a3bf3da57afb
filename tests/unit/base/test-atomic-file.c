/* Replacing a file atomically (base/atomic-file.h): new and replaced files get the whole
 * contents and the right mode, a failed write leaves the old file as it was, and no
 * temporary file is left behind either way. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "base/atomic-file.h"
#include "base/error.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[] = "/tmp/cp-atomic-XXXXXX";

static int setup(void **state)
{
	(void)state;
	umask(022);
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[64];
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	return system(cmd);
}

static const char *in_dir(const char *name)
{
	static char path[256];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	return path;
}

static void assert_contents(const char *path, const char *want)
{
	char buf[256] = {0};
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	assert_int_equal(n, strlen(want));
	assert_string_equal(buf, want);
}

static unsigned mode_of(const char *path)
{
	struct stat st;
	assert_int_equal(stat(path, &st), 0);
	return st.st_mode & 07777;
}

/* Only the files the test made: no "*.tmp.*" left over. */
static void assert_no_tmp(void)
{
	DIR *d = opendir(dir);
	assert_non_null(d);
	for (struct dirent *e; (e = readdir(d));)
		assert_null(strstr(e->d_name, ".tmp."));
	closedir(d);
}

static void test_new_and_replace(void **state)
{
	(void)state;
	char path[256];
	snprintf(path, sizeof path, "%s", in_dir("a.out"));
	assert_int_equal(cp_write_file_atomic(path, "first", 5, 0), 0);
	assert_contents(path, "first");
	assert_int_equal(mode_of(path), 0644); /* 0666 less the umask */
	assert_int_equal(chmod(path, 0600), 0);
	assert_int_equal(cp_write_file_atomic(path, "second!", 7, CP_ATOMIC_SYNC), 0);
	assert_contents(path, "second!");
	assert_int_equal(mode_of(path), 0600); /* the replaced file's mode */
	assert_no_tmp();
}

static void test_failure_keeps_old(void **state)
{
	(void)state;
	char path[256];
	snprintf(path, sizeof path, "%s", in_dir("b.out"));
	assert_int_equal(cp_write_file_atomic(path, "old", 3, 0), 0);
	struct cp_atomic_file f;
	assert_int_equal(cp_atomic_begin(&f, path, CP_ATOMIC_SYNC), 0);
	assert_true(f.fd >= 0);
	assert_int_equal(write(f.fd, "partial", 7), 7);
	assert_int_equal(cp_atomic_commit(&f, CP_EIO), CP_EIO);
	assert_contents(path, "old");
	assert_no_tmp();
}

/* A writer that opens the temporary file by name (as SQLite does) after closing f.fd. */
static void test_by_name(void **state)
{
	(void)state;
	char path[256];
	snprintf(path, sizeof path, "%s", in_dir("c.out"));
	struct cp_atomic_file f;
	assert_int_equal(cp_atomic_begin(&f, path, CP_ATOMIC_SYNC), 0);
	close(f.fd);
	f.fd = -1;
	FILE *out = fopen(f.tmp, "wb");
	assert_non_null(out);
	fputs("by name", out);
	fclose(out);
	assert_int_equal(access(path, F_OK), -1); /* not in place before the commit */
	assert_int_equal(cp_atomic_commit(&f, 0), 0);
	assert_contents(path, "by name");
	assert_no_tmp();
}

static void test_missing_dir(void **state)
{
	(void)state;
	char path[256];
	snprintf(path, sizeof path, "%s", in_dir("no-such-dir/d.out"));
	assert_int_equal(cp_write_file_atomic(path, "x", 1, 0), CP_EIO);
	assert_non_null(strstr(cp_error_message(), "no-such-dir/d.out"));
	assert_non_null(strstr(cp_error_message(), "No such file"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_new_and_replace),
	    cmocka_unit_test(test_failure_keeps_old),
	    cmocka_unit_test(test_by_name),
	    cmocka_unit_test(test_missing_dir),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
