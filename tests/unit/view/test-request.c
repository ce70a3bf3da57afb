/* The parsing of `callpath view`'s requests (src/view/request.c): node ids, parameters and
 * their bounds, the raw query decoder, cookies, the Host check, the token comparison. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "view/request.h"

#include <stdio.h>
#include <string.h>

static void test_node_ids(void **state)
{
	static const char *const good[] = {"0",
					   "17",
					   "17.n",
					   "b3",
					   "f4294967294",
					   "b3.0",
					   "b4294967294.9999999",
					   "f12.g",
					   "f4294967294.ffffffffffffffff",
					   "f3.0123456789abcdef"};
	for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
		struct cp_web_node n;
		char buf[32];
		assert_int_equal(cp_web_node_parse(good[i], &n), 0);
		cp_web_node_format(&n, buf, sizeof buf);
		assert_string_equal(buf, good[i]);
	}
	static const char *const bad[] = {
	    "",	   "x",	    "-1",   "1.x", "b1.n", "1.n.n", "4294967295",  "99999999999999999999",
	    "1 ",  " 1",    "0x10", "b",   ".n",   "b3.",   "b3.10000000", "f3.1",
	    "3.1", "b3.1.1"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		struct cp_web_node n;
		assert_int_equal(cp_web_node_parse(bad[i], &n), -1);
	}
}

static int parse(const char *query, struct cp_web_req *r, char *err)
{
	cp_web_req_init(r);
	return cp_web_req_parse_query(r, query, err, 256);
}

static void test_parameters(void **state)
{
	struct cp_web_req r;
	char err[256];
	assert_int_equal(parse("view=bu&node=b5&sort=2:excl&threshold=1.5&limit=7&offset=3&"
			       "stat=max&derived=x%3Da%2Bb&q=ma+in&metric=1",
			       &r, err),
			 0);
	assert_int_equal(r.view, CP_WEB_BU);
	assert_int_equal(r.node.index, 5);
	assert_int_equal(r.sort, CP_WEB_SORT_EXCL);
	assert_int_equal(r.sort_metric, 2);
	assert_true(r.threshold == 1.5);
	assert_int_equal(r.limit, 7);
	assert_int_equal(r.offset, 3);
	assert_int_equal(r.stat, 3);
	assert_int_equal(r.nderived, 1);
	assert_string_equal(r.derived[0], "x=a+b");
	assert_string_equal(r.q, "ma in");
	cp_web_req_release(&r);
	static const char *const bad[] = {
	    "view=x",
	    "stat=avg",
	    "threshold=100.5",
	    "threshold=nan",
	    "threshold=0x1",
	    "limit=-1",
	    "metric=256",
	    "sort=1:up",
	    "sort=incl",
	    "node=b1",
	    "nosuch=1",
	    "derived=x",
	    "a=%zz",
	    "a=%4",
	    "q=%00",
	    "stat=max&thread=1",
	    "thread=1&stat=min",
	    "view=flat&node=b2",
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		err[0] = 0;
		assert_int_equal(parse(bad[i], &r, err), -1);
		assert_true(err[0] != 0);
		cp_web_req_release(&r);
	}
	char many[512] = "";
	for (int i = 0; i < CP_WEB_MAX_PARAMS + 1; i++)
		strcat(many, "_=1&");
	assert_int_equal(parse(many, &r, err), -1);
	cp_web_req_release(&r);
}

static void test_cookie_host_token(void **state)
{
	char v[40];
	assert_int_equal(cp_web_cookie_get("a=1; callpath_80=tok; b=2", "callpath_80", v, sizeof v),
			 0);
	assert_string_equal(v, "tok");
	assert_int_equal(cp_web_cookie_get("xcallpath_80=tok", "callpath_80", v, sizeof v), -1);
	assert_int_equal(cp_web_cookie_get("callpath_8=tok", "callpath_80", v, sizeof v), -1);
	assert_int_equal(cp_web_cookie_get("callpath_80=0123456789", "callpath_80", v, 5), -1);
	assert_true(cp_web_host_ok("127.0.0.1:8080", "127.0.0.1", 8080));
	assert_true(cp_web_host_ok("localhost:8080", "127.0.0.1", 8080));
	assert_true(cp_web_host_ok("[::1]:8080", "::1", 8080));
	assert_true(cp_web_host_ok("10.1.2.3:9", "10.1.2.3", 9));
	assert_true(cp_web_host_ok("anything:1", "0.0.0.0", 9));
	assert_false(cp_web_host_ok("evil.example:8080", "127.0.0.1", 8080));
	assert_false(cp_web_host_ok("127.0.0.1", "127.0.0.1", 8080));
	assert_false(cp_web_host_ok("127.0.0.1:80800", "127.0.0.1", 8080));
	assert_false(cp_web_host_ok(NULL, "127.0.0.1", 8080));
	assert_true(cp_web_token_eq("abc", "abc"));
	assert_false(cp_web_token_eq("abc", "abd"));
	assert_false(cp_web_token_eq("abc", "abcd"));
	assert_false(cp_web_token_eq("", ""));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_node_ids),
	    cmocka_unit_test(test_parameters),
	    cmocka_unit_test(test_cookie_host_token),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
