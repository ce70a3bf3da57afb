/* Private to src/view/: what the endpoint files share. */
#ifndef CP_VIEW_API_IMPL_H
#define CP_VIEW_API_IMPL_H

#include "view/api.h"

#define CP_WEB_MAX_ROWS 1000000

struct cp_web_rows {
	struct cp_web_row *v;
	size_t n, alloc;
};

/* A cp_web_row_fn that moves the row into the list (arg: struct cp_web_rows). */
int cp_web_rows_add(void *arg, struct cp_web_row *row);
void cp_web_rows_release(struct cp_web_rows *l);
/* Sorts by the request's sort (largest first, NaN last, name ascending). */
void cp_web_rows_sort(const struct cp_web_ctx *c, struct cp_web_rows *l);
/* [v0,v1,...] (null for NaN). */
void cp_web_json_values(struct strbuf *b, const double *v, size_t n);
/* A 4xx/5xx from a CP_E* code and the current error message. */
void cp_web_api_fail(struct cp_web_resp *out, int rc);

void cp_web_api_search(struct cp_web_ctx *c, struct cp_web_resp *out);
void cp_web_api_source(struct cp_web_ctx *c, struct cp_web_resp *out);
void cp_web_api_flame(struct cp_web_ctx *c, struct cp_web_resp *out);
void cp_web_api_sandwich(struct cp_web_ctx *c, struct cp_web_resp *out);
void cp_web_api_callgraph(struct cp_web_ctx *c, struct cp_web_resp *out);
void cp_web_api_threads(struct cp_web_ctx *c, struct cp_web_resp *out);
void cp_web_api_sync(struct cp_web_ctx *c, struct cp_web_resp *out); /* api-sync.c */

#endif
