/* Parameters of a `callpath view` API request (docs/cmd-view.md, "HTTP API"), parsed and
 * checked without trusting anything: every value is bounded, every id range-checked later
 * against the database. Pure functions over strings (no HTTP, no database): the fuzzer
 * (tests/fuzz/fuzz-view-query.c) drives them directly. */
#ifndef CP_VIEW_REQUEST_H
#define CP_VIEW_REQUEST_H

#include <stddef.h>
#include <stdint.h>

enum cp_web_view { CP_WEB_TD = 0, CP_WEB_BU = 1, CP_WEB_FLAT = 2 };
enum cp_web_sort { CP_WEB_SORT_INCL = 0, CP_WEB_SORT_EXCL = 1, CP_WEB_SORT_NAME = 2 };

#define CP_WEB_MAX_PARAMS 32
#define CP_WEB_MAX_DERIVED 8
#define CP_WEB_MAX_VALUE 1024 /* bytes of one parameter value */
#define CP_WEB_MAX_URL 4096
#define CP_WEB_NONE UINT32_MAX

/* A node id: top-down "123" (scope) or "123.n" (its <no line> leaf), bottom-up "b123",
 * flat "f123" (node indices of the view in memory), bottom-up read from the database
 * "b123.4" (frame 123, 4 levels of callers below its procedure: model-bu.c), flat read
 * from the database "f12.g" (group 12: module, file or procedure) and "f123.HASH" (a loop or
 * statement row below the procedure whose first frame is 123, HASH 16 hex digits). */
struct cp_web_node {
	int view;	/* enum cp_web_view */
	uint32_t index; /* scope id (td, lazy bu) or node index (bu, flat) */
	int noline;	/* td: the <no line> leaf of scope `index` */
	uint32_t level; /* lazy bu: levels of callers + 1; lazy flat: 1 group, 2 row; else 0 */
	uint64_t hash;	/* lazy flat row: its path below its procedure (model-flat.c) */
};

struct cp_web_req {
	int view, stat;	      /* enum cp_web_view, enum cp_db_statkind */
	int64_t thread, rank; /* -1 = all */
	const char *derived[CP_WEB_MAX_DERIVED];
	size_t nderived;
	int has_node;
	struct cp_web_node node;
	uint32_t metric;      /* `metric`, default 0 */
	int sort;	      /* enum cp_web_sort */
	uint32_t sort_metric; /* default 0 */
	double threshold;     /* percent, 0..100 */
	size_t offset, limit; /* limit 0 = the endpoint's default */
	const char *q;	      /* search regex */
	uint32_t file, proc;  /* CP_WEB_NONE when absent */
	double min;	      /* flame: fraction, < 0 = default */
	uint32_t depth;	      /* 0 = all */
	uint32_t nodes;	      /* callgraph: 0 = default */
	int format_dot;	      /* callgraph format=dot */
	const char *token;    /* token= */
	size_t nparams;
	char *strings[CP_WEB_MAX_PARAMS]; /* copies owned by the request */
	size_t nstrings;
};

void cp_web_req_init(struct cp_web_req *r);
void cp_web_req_release(struct cp_web_req *r);
/* Applies one decoded parameter. 0, or -1 with a message for the user in err (a 400). */
int cp_web_req_set(struct cp_web_req *r, const char *key, const char *value, char *err,
		   size_t errlen);
/* Checks combinations after the last parameter (stat with thread/rank). 0 or -1 + err. */
int cp_web_req_check(const struct cp_web_req *r, char *err, size_t errlen);
/* Splits a raw query string ("a=1&b=x%20y", '+' = space) and applies each parameter with
 * cp_web_req_set: what the fuzzer drives (the server gets decoded pairs from libmicrohttpd). */
int cp_web_req_parse_query(struct cp_web_req *r, const char *query, char *err, size_t errlen);

/* Parses a node id; 0 or -1. */
int cp_web_node_parse(const char *s, struct cp_web_node *n);
/* Writes the id of n into buf (at least 32 bytes). */
void cp_web_node_format(const struct cp_web_node *n, char *buf, size_t len);

/* The value of cookie `name` in a Cookie header, copied into out (at most outlen-1 bytes);
 * 0, or -1 when absent or too long. */
int cp_web_cookie_get(const char *header, const char *name, char *out, size_t outlen);
/* 1 when the Host header names the served address: host:port for host one of
 * "127.0.0.1", "localhost", "[::1]" or `bind` (the --bind address, IPv6 in brackets or not);
 * any host when bind is a wildcard ("0.0.0.0", "::"). */
int cp_web_host_ok(const char *host, const char *bind, unsigned port);
/* Constant-time comparison of two NUL-terminated strings; 1 when equal. */
int cp_web_token_eq(const char *a, const char *b);

#endif
