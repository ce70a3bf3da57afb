/* What `callpath view` serves: a profile database opened for lazy reading (db/query.h) for
 * the top-down view summed over all threads, and, on demand, the whole profile in memory
 * (report/profile.h) for the bottom-up and flat views, one thread or rank, and statistics
 * other than the sum. Rows are the nodes of the API (docs/cmd-view.md, "Node object"). */
#ifndef CP_VIEW_MODEL_H
#define CP_VIEW_MODEL_H

#include "db/db.h"
#include "view/request.h"

#include <stddef.h>
#include <stdint.h>

struct cp_dbq;
struct cp_expr;
struct cp_web_full;

struct cp_web_model {
	char *path; /* the database file */
	char *name; /* what the user named (directory or file) */
	struct cp_db head;
	struct cp_dbq *q;
	struct cp_expr **formulas; /* per head metric: a derived one's formula, else NULL */
	uint64_t generation;
	struct cp_web_full *full; /* cached in-memory profile (model-full.c), or NULL */
};

/* The metrics of one request: the database's, then the request's derived ones. */
struct cp_web_mset {
	size_t n, ndb;
	const char *names[CP_DB_MAX_METRICS + CP_WEB_MAX_DERIVED];
	struct cp_expr *exprs[CP_DB_MAX_METRICS + CP_WEB_MAX_DERIVED]; /* derived: formula */
};

struct cp_web_row {
	struct cp_web_node id, parent; /* parent valid when has_parent */
	int has_parent;
	const char *kind;
	char *name, *module, *file, *procedure; /* owned (cp_web_row_release) */
	uint32_t file_id, proc_id;		/* CP_WEB_NONE if none */
	int line, line_end, has_children;
	double incl[CP_DB_MAX_METRICS + CP_WEB_MAX_DERIVED];
	double excl[CP_DB_MAX_METRICS + CP_WEB_MAX_DERIVED];
};

struct cp_web_ctx {
	struct cp_web_model *m;
	const struct cp_web_req *req;
	struct cp_web_mset ms;
};

typedef int (*cp_web_row_fn)(void *arg, struct cp_web_row *row);

int cp_web_model_open(struct cp_web_model *m, const char *dbpath, const char *name);
void cp_web_model_release(struct cp_web_model *m);
/* Replaces the database (a live measurement analyzed again): generation + 1. */
int cp_web_model_reopen(struct cp_web_model *m, const char *dbpath);

/* Prepares ctx for req: the metric set (a bad formula: -1 with the message in err). */
int cp_web_ctx_init(struct cp_web_ctx *c, struct cp_web_model *m, const struct cp_web_req *req,
		    char *err, size_t errlen);
void cp_web_ctx_release(struct cp_web_ctx *c);

void cp_web_row_release(struct cp_web_row *r);
/* The node `id` of the request's view: 0, CP_ENOENT (404) or another CP_E*. */
int cp_web_node_get(struct cp_web_ctx *c, const struct cp_web_node *id, struct cp_web_row *out);
/* fn for each child of `id` (the row is released after fn returns unless fn took it: fn may
 * set row->name etc. to NULL). */
int cp_web_children(struct cp_web_ctx *c, const struct cp_web_node *id, cp_web_row_fn fn,
		    void *arg);
/* For a node of the lazy top-down view with many children: fn for the `want` first children
 * in the request's sort order among those whose |inclusive value| of the sort metric is >=
 * cut (cut < 0: all), and for its <no line> leaf (unsorted: the caller sorts); *total = the
 * number of all children. 1 when answered so; 0 when the caller must list every child
 * (another view or selection, sort by name or by a request's derived metric, few
 * children); or a negative CP_E*. */
int cp_web_children_top(struct cp_web_ctx *c, const struct cp_web_node *id, size_t want, double cut,
			cp_web_row_fn fn, void *arg, size_t *total);
/* Whether the request needs the in-memory profile (everything but the top-down view summed
 * over all threads). */
int cp_web_needs_full(const struct cp_web_req *req);

/* model-full.c: the same over the in-memory profile. */
int cp_web_full_node(struct cp_web_ctx *c, const struct cp_web_node *id, struct cp_web_row *out);
int cp_web_full_children(struct cp_web_ctx *c, const struct cp_web_node *id, cp_web_row_fn fn,
			 void *arg);
void cp_web_full_free(struct cp_web_full *f);
/* The in-memory profile of the request's selection (thread, rank), loaded on first use;
 * NULL with cp_error set when it cannot be read. */
struct cp_profile;
const struct cp_profile *cp_web_full_profile(struct cp_web_ctx *c);

/* Evaluates the request's derived metrics of r from its database metrics. */
void cp_web_eval(const struct cp_web_ctx *c, struct cp_web_row *r);

#endif
