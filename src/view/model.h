/* What `callpath view` serves: a profile database opened for lazy reading (db/query.h) for
 * the top-down view summed over all threads, and, on demand, the whole profile in memory
 * (report/profile.h) for the bottom-up and flat views, one thread or rank, and statistics
 * other than the sum. Rows are the nodes of the API (docs/cmd-view.md, "Node object"). */
#ifndef CP_VIEW_MODEL_H
#define CP_VIEW_MODEL_H

#include "db/db.h"
#include "view/request.h"

#include <pthread.h>
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
	struct cp_web_full *full;   /* cached in-memory profile (model-full.c), or NULL */
	struct fview *flat;	    /* the last procedure's rows of the lazy flat view, or NULL */
	struct cp_web_async *async; /* the server's: whole profiles load off the request thread */
};

/* A server's background loading (model-full.c). Every field is guarded by lock, which the
 * server holds while it answers an API request; a load job takes it only to install its
 * result. Kept by cp_web_model_reopen. */
struct cp_web_async {
	pthread_mutex_t lock;
	pthread_cond_t idle; /* signalled when jobs drops to 0 */
	int jobs;	     /* load jobs running */
	int loading;	     /* a job for the model's generation loading_gen is running */
	uint64_t loading_gen;
	int failed; /* the last job for generation failed_gen failed: its code and message */
	uint64_t failed_gen;
	int failed_rc;
	int64_t failed_thread, failed_rank; /* its selection */
	char failed_msg[512];
};

/* cp_web_full_profile and the views over it: the whole profile is being loaded (HTTP 202). */
#define CP_WEB_LOADING (-100)

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
	int full_rc; /* why cp_web_full_profile returned NULL */
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

/* model-bu.c: the bottom-up view summed over all threads, read lazily from the database
 * (when it has the bottom-up tables: cp_web_bu_lazy); the root's row is the top-down root's. */
int cp_web_bu_lazy(const struct cp_web_ctx *c);
int cp_web_bu_node(struct cp_web_ctx *c, const struct cp_web_node *id, struct cp_web_row *out);
int cp_web_bu_children(struct cp_web_ctx *c, const struct cp_web_node *id, cp_web_row_fn fn,
		       void *arg);

/* model-threads.c: for /api/threads, each profile's raw inclusive and exclusive values of
 * node id (added to incl and excl, nprofiles * nraw each, profile-major) read from the
 * database's per-thread tables: 1 when answered so, 0 when the whole profile is needed (a
 * database without those tables, an id of the whole profile's views), or a negative CP_E*
 * (CP_ENOENT: no such node). */
int cp_web_threads_lazy(struct cp_web_ctx *c, const struct cp_web_node *id, double *incl,
			double *excl);
/* model-threads.c: 1 when the request is the top-down view of one thread or rank (no
 * statistic) and the database has the per-thread tables: then the lazy top-down view
 * serves it, each row's values the selected profiles' from scope_thread (select_values:
 * nraw raw values each). select_check: 0, or CP_ENOENT when no profile is selected. */
int cp_web_td_select(const struct cp_web_ctx *c);
int cp_web_select_check(const struct cp_web_ctx *c);
int cp_web_select_values(const struct cp_web_ctx *c, uint32_t id, double *incl, double *excl);
/* model-threads.c: 1 when the request is the top-down view of a statistic over all threads
 * (mean, min, max, stddev) and the database has the per-thread tables: then the lazy
 * top-down view serves it, rows from the database's statistics, a <no line> leaf's
 * statistic from each profile's value (cp_web_own_stat: scope id's inclusive values less
 * its children's, kids: np * nraw; st the statistic and psum the scope's sums, nraw each). */
int cp_web_td_stat(const struct cp_web_ctx *c);
int cp_web_own_stat(const struct cp_web_ctx *c, uint32_t id, const double *kids, double *st,
		    double *psum);
/* model-threads.c: the bottom-up and flat views of one thread or rank, or of a statistic
 * over threads, read lazily from the per-thread tables: 1 when the request is one of those
 * and the database has scope_thread and flat_thread. sel_reduce: a row's raw values from
 * each profile's (incl, excl: np * nraw, profile-major, either may be NULL), the selected
 * profiles' sum or the statistic over all, then the formulas; 0 when a selection leaves
 * the row without a value (report has no such row), else 1. sel_row: the same from a row
 * of the per-thread table `table` (CP_DBQ_SCOPE 0: the total, its inclusive values),
 * or a negative CP_E*. */
int cp_web_sel_lazy(const struct cp_web_ctx *c);
int cp_web_sel_reduce(const struct cp_web_ctx *c, const double *incl, const double *excl,
		      struct cp_web_row *r);
int cp_web_sel_row(const struct cp_web_ctx *c, int table, uint32_t id, struct cp_web_row *r);
/* model-bu.c, model-flat.c: the same for a node "bX.K" of the lazy bottom-up view, a row
 * "fP.H" of the lazy flat view below a procedure. */
int cp_web_bu_threads(struct cp_web_ctx *c, const struct cp_web_node *id, double *incl,
		      double *excl);
int cp_web_flat_threads(struct cp_web_ctx *c, const struct cp_web_node *id, double *incl,
			double *excl);

/* model-flat.c: the flat view summed over all threads, read lazily from the database
 * (when it has the flat tables: cp_web_flat_lazy). */
int cp_web_flat_lazy(const struct cp_web_ctx *c);
int cp_web_flat_node(struct cp_web_ctx *c, const struct cp_web_node *id, struct cp_web_row *out);
int cp_web_flat_children(struct cp_web_ctx *c, const struct cp_web_node *id, cp_web_row_fn fn,
			 void *arg);
void cp_web_flat_release(struct cp_web_model *m);
/* A scope's display name, as the top-down view's (owned). */
char *cp_web_scope_name(const struct cp_db *h, const struct cp_db_scope *s);
/* Values of a row read from the database's derived tables: raw sums in, then the
 * database's formulas and the request's derived metrics. */
void cp_web_eval_db(const struct cp_web_ctx *c, struct cp_web_row *r);

/* model-full.c: the same over the in-memory profile. */
int cp_web_full_node(struct cp_web_ctx *c, const struct cp_web_node *id, struct cp_web_row *out);
int cp_web_full_children(struct cp_web_ctx *c, const struct cp_web_node *id, cp_web_row_fn fn,
			 void *arg);
/* Drops a reference (the model's, or a load job's); the last one frees. */
void cp_web_full_free(struct cp_web_full *f);
void cp_web_async_init(struct cp_web_async *a);
/* Waits until no load job runs, then releases a. */
void cp_web_async_release(struct cp_web_async *a);
/* Runs fn(arg) on a detached thread: 0 or an errno. */
int cp_web_spawn(void *(*fn)(void *), void *arg);
/* The in-memory profile of the request's selection (thread, rank), loaded on first use;
 * NULL with c->full_rc (CP_WEB_LOADING while a server loads it in the background) and
 * cp_error set when it cannot be read. */
struct cp_profile;
const struct cp_profile *cp_web_full_profile(struct cp_web_ctx *c);
/* For a bottom-up or flat row id (the lazy view's or the full model's, of all threads):
 * each profile's raw inclusive and exclusive values of it, as that view of the profile's
 * thread alone holds (nprofiles * nraw each, profile-major). c->req: all threads, sum. */
int cp_web_full_row_threads(struct cp_web_ctx *c, const struct cp_web_node *id, double *incl,
			    double *excl);

/* Evaluates the request's derived metrics of r from its database metrics. */
void cp_web_eval(const struct cp_web_ctx *c, struct cp_web_row *r);

#endif
