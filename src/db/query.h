/* Lazy reading of a profile database file, for viewers of big databases (`callpath view`):
 * the small tables (run, modules, files, procedures, metrics, profiles) are read into a
 * struct cp_db "head" (cp_db_read_head); scopes and their statistics stay in SQLite and are
 * read on demand, a node's children at a time (the `scope_parent` index). Memory does not
 * grow with the number of scopes. Implemented in db-sqlite-query.c. Not thread-safe: one
 * thread uses a handle. */
#ifndef CP_DB_QUERY_H
#define CP_DB_QUERY_H

#include "db/db.h"

#include <stddef.h>
#include <stdint.h>

struct cp_dbq;

/* One scope with its statistics: stats[metric * 2 + incl] for every metric of the head
 * (zeros, argmax CP_DB_NONE, where the database has no row). */
struct cp_dbq_row {
	uint32_t id;
	struct cp_db_scope s; /* parent, kind, depth, proc, module, file, line, extent, addr */
	int has_children;
	int parent_kind; /* cp_dbq_scopes_of_file only: kind of the parent scope; else -1 */
	struct cp_db_stat *stats;
};

typedef int (*cp_dbq_row_fn)(void *ctx, const struct cp_dbq_row *row);

/* Opens path read-only; head gets the small tables (cp_db_read_head), owned by the caller
 * (cp_db_release) and used by the handle until cp_dbq_close. 0 or a negative CP_E*. */
int cp_dbq_open(const char *path, struct cp_db *head, struct cp_dbq **out);
void cp_dbq_close(struct cp_dbq *q);
/* on: begins a read transaction, so that the queries until cp_dbq_hold(q, 0) take the file's
 * lock and check its pages once (not once a query); off: ends it. */
void cp_dbq_hold(struct cp_dbq *q, int on);
/* Number of scopes (ids are 0 .. n-1). */
size_t cp_dbq_nscopes(const struct cp_dbq *q);
/* Scope `id` with its statistics: fn called once; CP_ENOENT if there is no such scope. */
int cp_dbq_scope(struct cp_dbq *q, uint32_t id, cp_dbq_row_fn fn, void *ctx);
/* The children of parent in id order, fn once each (a nonzero return stops). */
int cp_dbq_children(struct cp_dbq *q, uint32_t parent, cp_dbq_row_fn fn, void *ctx);
/* A page of the children of parent, sorted by the inclusive (excl = 0: exclusive) sum of
 * metric, largest first (no value last, then by id), only those whose inclusive sum of
 * metric is >= min_incl in absolute value (min_incl < 0: all): rows offset .. offset+limit-1 of
 * that order, fn once each. For nodes with many children, where sorting in SQLite beats reading
 * them all. */
int cp_dbq_children_page(struct cp_dbq *q, uint32_t parent, uint32_t metric, int excl,
			 double min_incl, size_t offset, size_t limit, cp_dbq_row_fn fn, void *ctx);
/* Of the children of parent: how many (*n) and, for every metric, the sum of their
 * inclusive sums (sums[metric], head->nmetrics of them; NaN values skipped). */
int cp_dbq_children_sums(struct cp_dbq *q, uint32_t parent, size_t *n, double *sums);
/* Scopes of the given kinds (bit 1 << enum cp_db_kind) whose procedure is one of procs[n]
 * (sorted ascending), at most limit of them, largest inclusive value of metric first. */
int cp_dbq_scopes_of_procs(struct cp_dbq *q, const uint32_t *procs, size_t n, unsigned kinds,
			   uint32_t metric, size_t limit, cp_dbq_row_fn fn, void *ctx);
/* The scopes of kinds (as above) whose file is `file`: statements for per-line costs, loops
 * for their extents (row->parent_kind set, has_children 0). */
int cp_dbq_scopes_of_file(struct cp_dbq *q, uint32_t file, unsigned kinds, cp_dbq_row_fn fn,
			  void *ctx);

/* The bottom-up tables (docs/format.md): a procedure frame (or <partial call paths> scope)
 * with its procedure's key (the id of the procedure's first frame), its caller frame
 * (CP_DB_NONE below the root) and the outermost frame of its procedure on its path. */
struct cp_dbq_frame {
	uint32_t scope, key, caller, outer;
	uint32_t kind, proc, module, file, line; /* of the scope */
};

/* A procedure of the bottom-up view (has_callers: a frame of it has a caller), or an
 * outermost frame (values: its inclusive sums, and the exclusive sums of every frame of its
 * procedure nested in it); incl/excl: one sum per metric of the head, raw metrics only (0
 * for derived ones). */
struct cp_dbq_bu {
	struct cp_dbq_frame f;
	int has_callers;
	double *incl, *excl;
};

typedef int (*cp_dbq_bu_fn)(void *ctx, const struct cp_dbq_bu *row);

/* 1 when the database has the bottom-up tables (older ones do not). */
int cp_dbq_has_bu(const struct cp_dbq *q);
/* The frame row of scope id: 0, or CP_ENOENT if it is not a frame. */
int cp_dbq_bu_frame(struct cp_dbq *q, uint32_t id, struct cp_dbq_frame *out);
/* The procedure with this key (CP_DB_NONE: every procedure, in key order): fn once each;
 * CP_ENOENT for an unknown key. */
int cp_dbq_bu_procs(struct cp_dbq *q, uint32_t key, cp_dbq_bu_fn fn, void *ctx);
/* The outermost frames of procedure key in scope order: fn once each. */
int cp_dbq_bu_outer(struct cp_dbq *q, uint32_t key, cp_dbq_bu_fn fn, void *ctx);

/* The flat tables (docs/format.md): a module, file, procedure or <partial call paths> row
 * of the flat view with its values (sums of raw metrics, 0 for derived ones); key: a
 * procedure's key (as above), else CP_DB_NONE; module, file: ids or CP_DB_NONE. */
struct cp_dbq_group {
	uint32_t id, parent, key, module, file;
	const char *kind; /* "module", "file", "procedure", "partial" */
	int has_children;
	double *incl, *excl;
};

typedef int (*cp_dbq_group_fn)(void *ctx, const struct cp_dbq_group *row);

/* 1 when the database has the flat tables. */
int cp_dbq_has_flat(const struct cp_dbq *q);
/* The group `id`, or (id CP_DB_NONE) the children of group `parent` (0: the top), or
 * (both CP_DB_NONE) the procedure group of key: fn once each. CP_ENOENT when id or key is
 * unknown. */
int cp_dbq_flat_groups(struct cp_dbq *q, uint32_t id, uint32_t parent, uint32_t key,
		       cp_dbq_group_fn fn, void *ctx);

/* A scope of the body of a frame of a procedure: the frame itself, and the scopes below it
 * down to (and with) the frames it calls; incl: its inclusive sums (nmetrics of the head). */
struct cp_dbq_body {
	uint32_t frame;
	uint32_t id;
	struct cp_db_scope s;
	const double *incl;
};

typedef int (*cp_dbq_body_fn)(void *ctx, const struct cp_dbq_body *row);

/* The bodies of every frame of procedure key, in scope id order. */
int cp_dbq_flat_bodies(struct cp_dbq *q, uint32_t key, cp_dbq_body_fn fn, void *ctx);

/* The per-thread tables (docs/format.md): each profile's values of a scope (CP_DBQ_SCOPE,
 * scope_thread) or of a flat view row (CP_DBQ_FLAT, flat_thread: flat_group ids). */
enum { CP_DBQ_SCOPE = 0, CP_DBQ_FLAT = 1 };
/* 1 when the database has that table (older ones do not). */
int cp_dbq_has_threads(const struct cp_dbq *q, int table);
/* Adds each profile's raw inclusive values of row id to incl[profile * nraw + metric] and
 * its exclusive ones to excl (either may be NULL; nraw: the head's raw metrics); a row
 * without values adds nothing. CP_ENOENT without the table, CP_EFORMAT for a bad row. */
int cp_dbq_threads_add(struct cp_dbq *q, int table, uint32_t id, double *incl, double *excl);
/* Every frame of procedure key with its outermost frame: fn(ctx, scope, outer) once each
 * (a nonzero return stops). */
typedef int (*cp_dbq_pair_fn)(void *ctx, uint32_t a, uint32_t b);
int cp_dbq_bu_frames(struct cp_dbq *q, uint32_t key, cp_dbq_pair_fn fn, void *ctx);

#endif
