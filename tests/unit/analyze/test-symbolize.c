/* The report's symbolizer: errors for missing and non-ELF files (cached, repeated), PLT
 * stubs named name@plt, return addresses looked up at offset - 1, and the procedure table
 * it shares with the structure recovery (aliases, .cold parts) on the gcc fixture. */
#include "analyze/module.h"
#include "analyze/symbolize.h"
#include "base/error.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static char fixture[4096];

static int setup(void **state)
{
	const char *dir = getenv("CP_BUILD_DIR");
	snprintf(fixture, sizeof fixture, "%s/tests/fixtures/src/loops.gcc.O2", dir ? dir : ".");
	FILE *f = fopen(fixture, "rb");
	if (!f) {
		fprintf(stderr, "fixture %s missing: build the struct-fixtures target\n", fixture);
		return -1;
	}
	fclose(f);
	return 0;
}

static void test_errors(void **state)
{
	struct cp_symbolizer *s = cp_symbolizer_new();
	struct cp_sym_info info;
	for (int i = 0; i < 2; i++) { /* the failure is remembered, and reported again */
		assert_int_equal(
		    cp_symbolizer_lookup(s, "/no/such/file", NULL, 0, 0x1000, 0, &info), CP_ENOENT);
		assert_non_null(strstr(cp_error_message(), "/no/such/file"));
		assert_int_equal(info.found, 0);
	}
	const char *dir = getenv("CP_SOURCE_DIR");
	char path[4096];
	snprintf(path, sizeof path, "%s/tests/fixtures/src/loops.c", dir ? dir : "../..");
	assert_int_equal(cp_symbolizer_lookup(s, path, NULL, 0, 0x10, 0, &info), CP_EFORMAT);
	assert_non_null(strstr(cp_error_message(), "not an ELF"));
	cp_symbolizer_free(s);
}

static const struct cp_proc *find_proc(const struct cp_module *m, const char *name)
{
	for (size_t i = 0; i < m->procs.nprocs; i++)
		if (!strcmp(m->procs.procs[i].name, name))
			return &m->procs.procs[i];
	return NULL;
}

static void test_procedures(void **state)
{
	struct cp_module m;
	assert_int_equal(cp_module_open(&m, fixture, CP_MODULE_STRICT_DWARF), 0);
	const struct cp_proc *nest = find_proc(&m, "nest"), *main_ = find_proc(&m, "main");
	assert_non_null(nest);
	assert_non_null(main_);
	assert_non_null(find_proc(&m, "printf@plt"));
	assert_null(find_proc(&m, "main.cold")); /* merged into main */
	assert_int_equal(main_->nparts, 1);
	const struct cp_proc_range *r = cp_proc_table_find(&m.procs, main_->parts[0].lo);
	assert_non_null(r);
	assert_int_equal(r->is_part, 1);
	assert_ptr_equal(&m.procs.procs[r->proc], main_);
	/* Ranges are sorted and disjoint. */
	for (size_t i = 1; i < m.procs.nranges; i++)
		assert_true(m.procs.ranges[i - 1].hi <= m.procs.ranges[i].lo);

	struct cp_symbolizer *s = cp_symbolizer_new();
	struct cp_sym_info info;
	assert_int_equal(cp_symbolizer_lookup(s, fixture, m.image.build_id, m.image.build_id_len,
					      nest->lo, 0, &info),
			 0);
	assert_int_equal(info.found, 1);
	assert_string_equal(info.procedure, "nest");
	assert_int_equal(info.proc_lo, nest->lo);
	assert_non_null(info.file);
	assert_non_null(strstr(info.file, "loops.c"));
	assert_true(info.line > 0);
	/* A return address equal to nest's entry belongs to the call before it. */
	assert_int_equal(cp_symbolizer_lookup(s, fixture, NULL, 0, nest->lo, 1, &info), 0);
	assert_true(!info.found || strcmp(info.procedure, "nest") != 0);
	/* A build-id mismatch is a warning (printed once), not a failure. */
	const uint8_t other[4] = {1, 2, 3, 4};
	assert_int_equal(cp_symbolizer_lookup(s, fixture, other, sizeof other, nest->lo, 0, &info),
			 0);
	assert_string_equal(info.procedure, "nest");
	/* The cold part reports its parent. */
	assert_int_equal(cp_symbolizer_lookup(s, fixture, NULL, 0, main_->parts[0].lo, 0, &info),
			 0);
	assert_string_equal(info.procedure, "main");
	cp_symbolizer_free(s);
	cp_module_release(&m);
}

/* The line of the "CALL dot" marker in the fixture's source. */
static int call_dot_line(void)
{
	const char *dir = getenv("CP_SOURCE_DIR");
	char path[4096], text[512];
	snprintf(path, sizeof path, "%s/tests/fixtures/src/loops.c", dir ? dir : "../..");
	FILE *f = fopen(path, "r");
	int line = 0, found = 0;
	while (f && fgets(text, sizeof text, f)) {
		line++;
		if (strstr(text, "CALL dot")) {
			found = line;
			break;
		}
	}
	if (f)
		fclose(f);
	return found;
}

static void test_inline_chain(void **state)
{
	/* Somewhere inside nest, dot is inlined at the "CALL dot" line. */
	int call_line = call_dot_line();
	assert_true(call_line > 0);
	struct cp_module m;
	assert_int_equal(cp_module_open(&m, fixture, 0), 0);
	const struct cp_proc *nest = find_proc(&m, "nest");
	assert_non_null(nest);
	struct cp_symbolizer *s = cp_symbolizer_new();
	int seen = 0;
	for (uint64_t a = nest->lo; a < nest->hi; a++) {
		struct cp_sym_info info;
		assert_int_equal(cp_symbolizer_lookup(s, fixture, NULL, 0, a, 0, &info), 0);
		assert_string_equal(info.procedure, "nest");
		if (info.ninline == 1) {
			assert_string_equal(info.inline_frames[0].name, "dot");
			assert_int_equal(info.inline_frames[0].line, call_line);
			seen++;
		}
	}
	assert_true(seen > 0);
	cp_symbolizer_free(s);
	cp_module_release(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_errors),
	    cmocka_unit_test(test_procedures),
	    cmocka_unit_test(test_inline_chain),
	};
	return cmocka_run_group_tests(tests, setup, NULL);
}
