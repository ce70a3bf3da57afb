/* Rendering of a view (view.h): the rows to show (threshold, depth, focus, sort) are chosen
 * once, then written as text, CSV or JSON, so every format carries the same numbers. */
#ifndef CP_REPORT_RENDER_H
#define CP_REPORT_RENDER_H

#include "report/profile.h"
#include "report/report.h"
#include "report/view.h"

#include <stdio.h>

struct cp_row {
	uint32_t node;
	uint32_t parent; /* node of the row shown as its parent; UINT32_MAX for the root row */
	int depth;	 /* 0 for the root row */
	int last;	 /* last shown child of its parent (for drawing the tree) */
};

struct cp_rows {
	struct cp_row *rows;
	size_t n, alloc;
};

struct cp_render;

/* What a view of other values than a profile's (callpath diff: A, B, their difference and
 * its noise as metrics) changes in the rendering. */
struct cp_render_hooks {
	/* per metric: the metric whose root value is 100%, or SIZE_MAX for no percentage */
	const size_t *pct_of;
	/* a row is also shown when this metric's inclusive value passes the threshold (of its
	 * own total); SIZE_MAX = none */
	size_t alt_metric;
	/* text: the value columns' header and each row's value columns, instead of the
	 * inclusive and exclusive columns of r->cols */
	void (*text_header)(const struct cp_render *r, FILE *out);
	void (*text_cells)(const struct cp_render *r, uint32_t node, FILE *out);
	const void *ctx;
};

struct cp_render {
	const struct cp_view *view;
	const struct cp_summary *sum;
	const struct cp_report_options *opt;
	const char *view_name;
	size_t metric; /* the metric of the threshold, the hot path and the folded chain */
	size_t sort_metric;
	size_t cols[CP_REPORT_MAX_METRICS]; /* the metrics shown (text) */
	size_t ncols;
	double threshold; /* percent actually applied */
	struct cp_rows rows;
	uint8_t *hot; /* with --hot-path: per view node, 1 on the hot path */
	char *via;    /* text: the folded calling context above the first shown level, or NULL */
	const struct cp_render_hooks *hooks; /* NULL: a profile's view */
};

/* The smallest inclusive value shown at threshold percent of total. */
double cp_render_min_incl(double total, double threshold);
/* Chooses the rows; returns 0, or CP_ENOENT when --focus matches no procedure. */
int cp_render_select(struct cp_render *r);
void cp_render_release(struct cp_render *r);
/* Folds the leading rows that form a single chain (program start-up frames: _start,
 * __libc_start_main, main...) into r->via, so the first shown level is where the cost
 * branches. */
void cp_render_fold_chain(struct cp_render *r);
/* Keeps the first n rows (pre-order: the hottest paths first), redrawing the tree's ends. */
void cp_render_truncate(struct cp_render *r, size_t n);

void cp_render_summary_text(const struct cp_summary *s, FILE *out);
void cp_render_text(const struct cp_render *r, FILE *out);
void cp_render_csv(const struct cp_render *r, FILE *out);
void cp_render_json(const struct cp_render *r, FILE *out);
/* s as a JSON string ("null" for NULL; bytes that are not UTF-8 become U+FFFD). */
void cp_render_json_str(FILE *out, const char *s);

/* Renders the view chosen by o of an already built profile (o's derived metrics must be in
 * the profile already: cp_report_run adds them). */
int cp_report_profile(const struct cp_profile *p, const struct cp_report_options *o, FILE *out);
/* summary-mpi.c: the MPI job's part of the end summary (ranks measured, missing,
 * incomplete or running another program; MPI share; imbalance over ranks of the first n
 * contexts of r); nothing without ranks. dir: the measurement directory (its headers give
 * the job's size). */
void cp_report_print_mpi_job(const struct cp_profile *p, const struct cp_render *r, const char *dir,
			     FILE *out, size_t n);

/* Helpers shared by the renderers. */
double cp_render_pct(const struct cp_render *r, uint32_t node, size_t metric, int inclusive);
const char *cp_render_short(const char *path);
/* A value in the unit of metric m (seconds for ns, integers for counts); "" for NaN. */
void cp_render_value_text(const struct cp_render *r, size_t m, double v, char *buf, size_t len);
/* For a loop or statement: the name of its procedure (the nearest procedure above it in the
 * view), else NULL. */
const char *cp_render_enclosing(const struct cp_view *v, uint32_t node);
const char *cp_mechanism_name(uint32_t mechanism);
/* Delivered samples per second of thread CPU time (cputime metrics), or < 0 if unknown. */
double cp_summary_rate(const struct cp_summary *s, size_t metric);
double cp_summary_complete_pct(const struct cp_summary *s);

#endif
