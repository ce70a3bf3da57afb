/* The report's model: a tree of scopes with inclusive and exclusive values (doubles) per
 * metric. The top-down view is the profile database's scope tree (procedure frames, inlined
 * frames, loops, statements; profile.h builds it from a struct cp_db); the bottom-up and
 * flat views are derived from it. Renderers (render.h) only read these trees. */
#ifndef CP_REPORT_VIEW_H
#define CP_REPORT_VIEW_H

#include "base/hash.h"
#include "base/intern.h"

#include <stddef.h>
#include <stdint.h>

enum cp_vkind {
	CP_VK_ROOT = 0,
	CP_VK_PROCEDURE, /* a procedure frame; file/line: its call site in the caller */
	CP_VK_INLINED,	 /* an inlined frame; file/line: its call site in the enclosing frame */
	CP_VK_LINE,	 /* a statement; file/line: the statement */
	CP_VK_PARTIAL,	 /* samples whose unwind stopped early hang below it */
	CP_VK_MODULE,	 /* flat view: a load module */
	CP_VK_FILE,	 /* flat view: a source file */
	CP_VK_CALLER,	 /* bottom-up view: a caller; file/line: the call site in it */
	CP_VK_LOOP,	 /* a loop; file/line: its first line, line_end: its last */
};

const char *cp_vkind_name(enum cp_vkind k);

/* Names of the rows that hold costs without a place in the source: the statement of a
 * frame's or loop's cost at addresses without line information, the file level of
 * procedures without source (flat view), and the costs outside any procedure frame. */
#define CP_VIEW_NO_LINE "<no line>"
#define CP_VIEW_NO_SOURCE "<no source>"
#define CP_VIEW_PARTIAL "<partial call paths>"

struct cp_vnode {
	uint32_t parent; /* UINT32_MAX for the root (node 0) */
	uint32_t first_child, next_sibling, last_child;
	uint32_t kind;
	int line;
	int line_end;	    /* loops: last line of the loop's extent; else 0 */
	const char *name;   /* pooled */
	const char *module; /* pooled full path, or NULL */
	const char *file;   /* pooled, or NULL */
	uint64_t stamp;	    /* last sample counted (to count a sample once per node) */
};

struct cp_view {
	struct cp_vnode *nodes;
	size_t n, alloc;
	size_t nmetrics;
	double *incl; /* n * nmetrics */
	double *excl;
	struct cp_intern *pool; /* not owned */
	struct cp_hashtab children;
	uint64_t loop_own; /* bit m: metric m's exclusive stops at the nearest loop (db.h) */
};

/* Creates the root node. */
void cp_view_init(struct cp_view *v, size_t nmetrics, struct cp_intern *pool);
void cp_view_release(struct cp_view *v);
/* The child of parent with this key (strings must be pooled), created if missing. A LINE
 * node is keyed by file and line only: pass name NULL and set it when the node is new. */
uint32_t cp_view_child(struct cp_view *v, uint32_t parent, enum cp_vkind kind, const char *name,
		       const char *module, const char *file, int line);
/* The existing child of parent with the key of node `like` of view `other` (same pool), or
 * UINT32_MAX. */
uint32_t cp_view_find_like(const struct cp_view *v, uint32_t parent, const struct cp_view *other,
			   uint32_t like);
/* A new child of parent, never merged with an existing one (the top-down view maps database
 * scopes one to one onto nodes). */
uint32_t cp_view_append(struct cp_view *v, uint32_t parent, enum cp_vkind kind, const char *name,
			const char *module, const char *file, int line);
/* The pooled display name of a statement: "file.c:12" (base name of file). */
const char *cp_view_line_name(struct cp_intern *pool, const char *file, int line);
/* The pooled display name of a loop: "loop at file.c:120-134". */
const char *cp_view_loop_name(struct cp_intern *pool, const char *file, int lo, int hi);
/* For a calling context tree whose costs sit on statement nodes (and on frames without
 * statements): sets inclusive values (subtree sums), then adds each node's own cost to the
 * exclusive values of its enclosing loops and inlined frames up to its procedure frame (the
 * cost of their bodies, calls excluded). Call once, after all costs were added. */
void cp_view_sum_inclusive(struct cp_view *v);

static inline double *cp_view_incl(const struct cp_view *v, uint32_t node)
{
	return v->incl + (size_t)node * v->nmetrics;
}
static inline double *cp_view_excl(const struct cp_view *v, uint32_t node)
{
	return v->excl + (size_t)node * v->nmetrics;
}

/* What a derived view needs to hold, so that huge trees are not expanded where nothing
 * would be shown: nodes whose inclusive value of metric is below min_incl, and levels below
 * max_depth (0 = all), may be left out. */
struct cp_view_limits {
	size_t metric;
	double min_incl;
	int max_depth;
};

/* Derived views of a top-down tree (out is initialized here) whose own costs are on its
 * leaves (a frame or loop with children has no cost of its own: profile.c puts it on a
 * <no line> leaf). Recursion: a procedure's inclusive value counts each sample once,
 * however often it is on the sample's path. lim may be NULL (everything). The flat view is
 * load module > file (<no source> for code without lines) > procedure > loop (nested loops
 * nested) > statement; costs outside any procedure frame are a top-level
 * <partial call paths> row in both views. Each level's exclusive values add up to the
 * total. */
void cp_view_bottom_up(const struct cp_view *td, struct cp_view *out,
		       const struct cp_view_limits *lim);
void cp_view_flat(const struct cp_view *td, struct cp_view *out);

/* How a derived view's values are made of the top-down view's, so that the same view can be
 * evaluated again on other values (each thread's, for statistics over threads) without
 * building it again: for each entry, node's inclusive value gets the source's value (and
 * if `excl`, its exclusive value too). The sources: bottom-up, the top-down node's
 * inclusive value, and for the exclusive value the exclusive values of every occurrence
 * of the procedure nested in it (outer_of[j] = the outermost occurrence credited with node
 * j's exclusive value, or UINT32_MAX); flat, the top-down node's own (exclusive) value. The
 * root's values are the top-down root's inclusive values. */
struct cp_view_contrib {
	uint32_t node, src;
	uint32_t excl;
};

struct cp_view_contribs {
	struct cp_view_contrib *v;
	size_t n, alloc;
	uint32_t *outer_of; /* bottom-up: per top-down node */
};

void cp_view_contribs_release(struct cp_view_contribs *c);
/* As cp_view_bottom_up / cp_view_flat, recording into rec (initialized to zeros). */
void cp_view_bottom_up_rec(const struct cp_view *td, struct cp_view *out,
			   const struct cp_view_limits *lim, struct cp_view_contribs *rec);
void cp_view_flat_rec(const struct cp_view *td, struct cp_view *out, struct cp_view_contribs *rec);

#endif
