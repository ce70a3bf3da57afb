/* callpath top: an interactive terminal view (ncurses) of a running or finished measurement
 * or of a profile database. The model (model.c: the profile, its rows, which are expanded,
 * the cursor) is apart from the screen (screen.c, the only code that calls ncurses). */
#ifndef CP_TOP_TOP_H
#define CP_TOP_TOP_H

#include "report/profile.h"
#include "report/render.h"
#include "report/report.h"

#include <stddef.h>
#include <stdint.h>

struct cp_top_options {
	double interval;  /* seconds between re-reads of a running measurement */
	double threshold; /* percent of the total below which rows are left out */
	int view;	  /* enum cp_report_view_kind at the start */
};

void cp_top_options_init(struct cp_top_options *o);

/* Runs the view of path (a measurement directory or a database) on the terminal until the
 * user quits or a SIGINT/SIGTERM/SIGHUP arrives; the terminal is restored in every case.
 * 0 or a negative CP_E* code with cp_error() set. */
int cp_top_run(const char *path, const struct cp_top_options *o);

/* The measurement directory of process pid, run by `callpath record` (its CALLPATH_OUTPUT,
 * or that of its first child that has one: pid may be callpath record itself), into buf.
 * 0 or a negative CP_E* code with cp_error() set. */
int cp_top_pid_dir(int pid, char *buf, size_t size);

/* ---- the model (model.c) ---- */

struct cp_top_thread {
	int pid;
	int tidx;
};

struct cp_top {
	const char *path;
	struct cp_top_options opt;
	struct cp_profile *p; /* NULL until a load succeeded */
	struct cp_view view;  /* the shown view of p (top-down: a copy) */
	struct cp_report_options ro;
	struct cp_render r; /* rows: every row above the threshold, in pre-order */
	size_t metric;	    /* index in p's metrics */
	int thread;	    /* -1 all, else an index into threads */
	struct cp_top_thread *threads;
	size_t nthreads;
	uint64_t *open; /* keys of the expanded rows (sorted) */
	size_t nopen, aopen;
	int opened;	 /* the initial expansion was made for this view */
	uint32_t *shown; /* the visible rows (indices into r.rows) */
	size_t nshown;
	size_t cursor; /* index into shown */
	uint64_t cursor_key;
	uint64_t *keys; /* per view node: its key (the names on its path) */
	size_t scroll;
	int done; /* the measured program has finished (or a database) */
	unsigned refreshes;
	char message[512]; /* the last load error, shown in the header */
};

void cp_top_init(struct cp_top *t, const char *path, const struct cp_top_options *o);
void cp_top_release(struct cp_top *t);
/* (Re)reads the profile and rebuilds the rows, keeping expansion and cursor by key. */
void cp_top_reload(struct cp_top *t);
/* Rebuilds the rows from the loaded profile (after a view, metric or sort change). */
void cp_top_rebuild(struct cp_top *t);

enum cp_top_action {
	CP_TOP_UP,
	CP_TOP_DOWN,
	CP_TOP_PAGE_UP,
	CP_TOP_PAGE_DOWN,
	CP_TOP_HOME,
	CP_TOP_END,
	CP_TOP_EXPAND,	 /* expand; on an expanded row, go to its first child */
	CP_TOP_COLLAPSE, /* collapse; on a collapsed row, go to its parent */
	CP_TOP_TOGGLE,
	CP_TOP_EXPAND_ALL,
	CP_TOP_COLLAPSE_ALL,
	CP_TOP_NEXT_VIEW,
	CP_TOP_NEXT_METRIC,
	CP_TOP_NEXT_SORT,
	CP_TOP_NEXT_THREAD,
};

/* Applies an action; page is the number of rows on the screen. */
void cp_top_act(struct cp_top *t, enum cp_top_action a, size_t page);

/* The row (index into t->r.rows) of visible line i; whether it has children; whether it is
 * expanded. */
static inline uint32_t cp_top_row(const struct cp_top *t, size_t i)
{
	return t->shown[i];
}
int cp_top_has_children(const struct cp_top *t, uint32_t row);
int cp_top_is_open(const struct cp_top *t, uint32_t row);

#endif
