/* The JSON API of `callpath view` (docs/cmd-view.md, "HTTP API"): one function per
 * endpoint, from a parsed request to a response; no HTTP here. */
#ifndef CP_VIEW_API_H
#define CP_VIEW_API_H

#include "base/strbuf.h"
#include "view/model.h"
#include "view/request.h"

struct cp_web_resp {
	int status;	  /* 200, 400, 404, ... */
	const char *type; /* Content-Type */
	struct strbuf body;
};

struct cp_web_api_state {
	int live;	  /* a live measurement directory */
	const char *bind; /* for /api/info */
	int is_static;	  /* building the --html bundle */
};

void cp_web_resp_init(struct cp_web_resp *r);
void cp_web_resp_release(struct cp_web_resp *r);
/* {"error": msg} with status. */
void cp_web_resp_error(struct cp_web_resp *r, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Answers the API path ("/api/children", ...) for req. */
void cp_web_api(struct cp_web_model *m, const struct cp_web_api_state *st, const char *path,
		const struct cp_web_req *req, struct cp_web_resp *out);

/* Writes the node object of r (docs/cmd-view.md, "Node object"); with_parent adds "parent". */
void cp_web_json_row(struct strbuf *b, const struct cp_web_ctx *c, const struct cp_web_row *r,
		     int with_parent);

#endif
