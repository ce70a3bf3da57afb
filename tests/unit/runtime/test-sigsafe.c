/* The async-signal-safe formatting and parsing helpers, checked against snprintf. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "base/sigsafe/sigsafe.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define SAME_AS_SNPRINTF(...)                                                                      \
	do {                                                                                       \
		char a[128], b[128];                                                               \
		size_t n = cp_ss_format(a, sizeof a, __VA_ARGS__);                                 \
		int m = snprintf(b, sizeof b, __VA_ARGS__);                                        \
		assert_string_equal(a, b);                                                         \
		assert_int_equal(n, (size_t)m);                                                    \
	} while (0)

static void test_format_matches_snprintf(void **state)
{
	SAME_AS_SNPRINTF("plain");
	SAME_AS_SNPRINTF("%d|%d|%d", 0, -1, 2147483647);
	SAME_AS_SNPRINTF("%d", (int)-2147483647 - 1);
	SAME_AS_SNPRINTF("%u %lu %llu", 4000000000u, 18446744073709551615ul, 42ull);
	SAME_AS_SNPRINTF("%ld %lld", -9223372036854775807l - 1, -5ll);
	SAME_AS_SNPRINTF("%x %lx", 0xdeadbeefu, 0x123456789abcul);
	SAME_AS_SNPRINTF("%08x|%5u|%03d", 0xabu, 7u, 5);
	SAME_AS_SNPRINTF("%s/%d.%u.%u%s", "/tmp/dir", 1234, 0u, 17u, ".thr");
	SAME_AS_SNPRINTF("%c%c 100%%", 'o', 'k');
	SAME_AS_SNPRINTF("%zu %zd", (size_t)123456789, (ssize_t)-3);
	SAME_AS_SNPRINTF("%p", (void *)0x7fff1234);
}

static void test_format_truncates(void **state)
{
	char buf[8];
	memset(buf, 'X', sizeof buf);
	size_t n = cp_ss_format(buf, sizeof buf, "%s-%d", "abcdef", 12345);
	assert_int_equal(n, 7);
	assert_string_equal(buf, "abcdef-");
	char one[1] = {'X'};
	assert_int_equal(cp_ss_format(one, 1, "hello"), 0);
	assert_int_equal(one[0], 0);
	struct cp_ss_buf b;
	char mem[4];
	cp_ss_buf_init(&b, mem, sizeof mem);
	cp_ss_buf_puts(&b, "toolong");
	assert_true(b.truncated);
	assert_string_equal(mem, "too");
	cp_ss_buf_init(&b, mem, sizeof mem);
	cp_ss_buf_puts(&b, NULL);
	assert_string_equal(mem, "(nu");
}

static void test_parse(void **state)
{
	uint64_t v;
	const char *end;
	assert_int_equal(cp_ss_parse_u64("1000", &v, &end), 0);
	assert_int_equal(v, 1000);
	assert_int_equal(*end, 0);
	assert_int_equal(cp_ss_parse_u64("250us", &v, NULL), 0);
	assert_int_equal(v, 250000);
	assert_int_equal(cp_ss_parse_u64("2ms,x", &v, &end), 0);
	assert_int_equal(v, 2000000);
	assert_string_equal(end, ",x");
	assert_int_equal(cp_ss_parse_u64("3s", &v, NULL), 0);
	assert_int_equal(v, 3000000000ull);
	assert_int_equal(cp_ss_parse_u64("ms", &v, NULL), -1);
	assert_int_equal(cp_ss_parse_u64("99999999999999999999", &v, NULL), -1);
	assert_int_equal(cp_ss_parse_u64("18446744073709551615s", &v, NULL), -1);
}

static void test_strings(void **state)
{
	char d[6];
	assert_int_equal(cp_ss_strlcpy(d, "abcdefgh", sizeof d), 8);
	assert_string_equal(d, "abcde");
	assert_int_equal(cp_ss_strlen(""), 0);
	assert_true(cp_ss_strcmp("abc", "abd") < 0);
	assert_true(cp_ss_strcmp("b", "abc") > 0);
	assert_int_equal(cp_ss_strcmp("same", "same"), 0);
	assert_int_equal(cp_ss_strncmp("cputime@1", "cputime", 7), 0);
	char m[4] = "xyz";
	cp_ss_memset(m, 'a', 2);
	assert_string_equal(m, "aaz");
	cp_ss_memcpy(m, "QR", 2);
	assert_string_equal(m, "QRz");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_format_matches_snprintf),
	    cmocka_unit_test(test_format_truncates),
	    cmocka_unit_test(test_parse),
	    cmocka_unit_test(test_strings),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
