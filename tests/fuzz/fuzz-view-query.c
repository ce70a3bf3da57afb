/* libFuzzer target for `callpath view`'s request handling (src/view/request.c, api*.c):
 * hostile URLs and parameters must give a 4xx answer or a well-formed 200, never a crash,
 * a leak or undefined behaviour.
 *
 * Input: "PATH?QUERY" (e.g. "/api/children?node=3&sort=0:excl"). The query is parsed with
 * cp_web_req_parse_query, then answered by cp_web_api over a small database written at
 * start-up (the lazy top-down view and the in-memory views). The same bytes also go through
 * the cookie, Host and node-id parsers. The call graph is asked as DOT (Graphviz's own
 * allocations are not ours to check).
 *
 * Build and run: tests/e2e/view-fuzz.sh (clang -fsanitize=fuzzer,address,undefined). */
#include "base/error.h"
#include "db/analyze.h"
#include "db/db.h"
#include "fuzz-seed-db.h"
#include "view/api.h"
#include "view/model.h"
#include "view/request.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The fuzzer reads a database file, never a measurement directory: the correlation (and
 * with it the structure analyzer, which the build of the fuzzer leaves out) is not linked. */
int cp_profile_open(const char *path, const struct cp_analyze_options *o, struct cp_db *db)
{
	return cp_error(CP_ENOTSUP, "not in the fuzzer");
}

void cp_analyze_options_init(struct cp_analyze_options *o)
{
	memset(o, 0, sizeof *o);
}

static struct cp_web_model model;
static char path[64];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *tmp = access("/dev/shm", W_OK) ? "/tmp" : "/dev/shm";
	snprintf(path, sizeof path, "%s/cp-fuzz-view-%d.db", tmp, (int)getpid());
	fuzz_seed_db_write(path);
	if (cp_web_model_open(&model, path, "fuzz")) {
		fprintf(stderr, "fuzz-view-query: %s\n", cp_error_message());
		abort();
	}
	unlink(path); /* the open handle keeps it */
	return 0;
}

static void parsers(const char *s)
{
	char buf[64];
	struct cp_web_node n;
	if (!cp_web_node_parse(s, &n))
		cp_web_node_format(&n, buf, sizeof buf);
	cp_web_cookie_get(s, "callpath_8080", buf, sizeof buf);
	cp_web_host_ok(s, "::1", 8080);
	cp_web_host_ok(s, "10.0.0.1", 1);
	cp_web_token_eq(s, "0123456789abcdef0123456789abcdef");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
	if (n > 8192)
		return 0;
	char *s = malloc(n + 1);
	memcpy(s, data, n);
	s[n] = 0;
	parsers(s);
	char *q = strchr(s, '?');
	if (q)
		*q++ = 0;
	struct cp_web_req req;
	char err[512];
	cp_web_req_init(&req);
	int rc = cp_web_req_parse_query(&req, q ? q : "", err, sizeof err);
	if (!rc) {
		if (!strcmp(s, "/api/callgraph"))
			req.format_dot = 1;
		struct cp_web_api_state st = {0};
		struct cp_web_resp resp;
		cp_web_resp_init(&resp);
		cp_web_api(&model, &st, s, &req, &resp);
		if (resp.status != 200 && (resp.status < 400 || resp.status > 501))
			abort();
		if (strstr(resp.type, "json") && resp.body.buf[0] != '{')
			abort();
		cp_web_resp_release(&resp);
	}
	cp_web_req_release(&req);
	cp_error_clear();
	free(s);
	return 0;
}
