/* callpath report: the three views (top-down, bottom-up, flat) of a profile database (or a
 * measurement directory, analyzed first), rendered as text, CSV or JSON. The model (view.h)
 * is separate from the renderers (render.h). */
#ifndef CP_REPORT_REPORT_H
#define CP_REPORT_REPORT_H

#include <stdio.h>

enum cp_report_view_kind {
	CP_VIEW_TOP_DOWN = 0,
	CP_VIEW_BOTTOM_UP = 1,
	CP_VIEW_FLAT = 2,
	CP_VIEW_SYNC = 3, /* waits by synchronization object (view-sync.c) */
};

enum cp_report_sort {
	CP_SORT_INCLUSIVE = 0,
	CP_SORT_EXCLUSIVE = 1,
	CP_SORT_NAME = 2,
};

enum cp_report_format {
	CP_FORMAT_TEXT = 0,
	CP_FORMAT_CSV = 1,
	CP_FORMAT_JSON = 2,
};

#define CP_REPORT_ALL_THREADS (-1)

#define CP_REPORT_MAX_METRICS 64

struct cp_report_options {
	enum cp_report_view_kind view;
	/* --metric: the metrics shown as columns (NULL/0 = the first metric); an item
	 * NAME=FORMULA adds a derived metric at report time and shows it */
	const char *metrics[CP_REPORT_MAX_METRICS];
	size_t nmetrics;
	const char *sort_metric; /* --sort NAME[:incl|excl]; NULL = the first shown metric */
	enum cp_report_sort sort;
	int stat;	   /* enum cp_db_statkind: the statistic over threads shown */
	double threshold;  /* percent of the total; < 0 = the format's default (1 text, 0 else) */
	int depth;	   /* max depth shown (0 = unlimited) */
	const char *focus; /* procedure name: show subtrees rooted at it; NULL = whole tree */
	int flatten;	   /* replace the top N levels by their children */
	double hot_path;   /* >= 0: expand only the hot path (child keeps >= this % of its
			    * parent's inclusive value); < 0: off */
	int thread;	   /* tidx, or CP_REPORT_ALL_THREADS (summed) */
	int thread_pid;	   /* only this pid (0 = every process); every thread of it when
			    * thread is CP_REPORT_ALL_THREADS */
	int rank;	   /* MPI rank: only its program's threads; -1 = every rank */
	enum cp_report_format format;
	int summary;	/* print the summary header (text) */
	int ascii;	/* draw the tree with ASCII instead of box-drawing characters */
	FILE *progress; /* analyze's progress when PATH is a measurement directory */
	int no_write;	/* never save PATH/callpath.db (live views of a running program) */
	/* --stat-over ranks: the statistic over MPI ranks (each the sum over its threads) */
	int stat_over_ranks;
};

void cp_report_options_init(struct cp_report_options *o);

/* Opens PATH (a profile database, or a measurement directory analyzed into DIR/callpath.db
 * by cp_profile_open) and writes the chosen view to out.
 * Returns 0 or a negative CP_E* code with cp_error() set. */
int cp_report_run(const char *path, const struct cp_report_options *o, FILE *out);

/* --view sync: wait time by synchronization object from PATH (a database's sync_object
 * table, or a measurement directory read directly). */
int cp_report_sync(const char *path, const struct cp_report_options *o, FILE *out);

/* For `callpath record`: opens dir (analyzing it into DIR/callpath.db) and prints the
 * summary of the run, its hottest calling contexts (top-down, threshold 5%, at most top_n
 * rows, the start-up chain folded), the hottest procedures and, with several threads, the
 * imbalance of the hottest contexts over threads (for an MPI job: the job's ranks, its
 * MPI share and the imbalance over ranks). Returns 0 or a negative CP_E*. */
int cp_report_print_summary(const char *dir, FILE *out, int top_n);

#endif
