/* callpath report: the three views (top-down, bottom-up, flat) of a measurement directory,
 * rendered as text, CSV or JSON. The model (view.h) is separate from the renderers so that
 * the database (issue "database") can feed the same views. */
#ifndef CP_REPORT_REPORT_H
#define CP_REPORT_REPORT_H

#include <stdio.h>

enum cp_report_view_kind {
	CP_VIEW_TOP_DOWN = 0,
	CP_VIEW_BOTTOM_UP = 1,
	CP_VIEW_FLAT = 2,
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

struct cp_report_options {
	enum cp_report_view_kind view;
	const char *metric;  /* metric name; NULL = the first */
	enum cp_report_sort sort;
	double threshold;    /* percent of the total; < 0 = the format's default (1 text, 0 else) */
	int depth;           /* max depth shown (0 = unlimited) */
	const char *focus;   /* procedure name: show subtrees rooted at it; NULL = whole tree */
	int thread;          /* tidx, or CP_REPORT_ALL_THREADS (summed) */
	int thread_pid;      /* with thread >= 0: only this pid (0 = every process) */
	enum cp_report_format format;
	int summary;         /* print the summary header (text) */
	int ascii;           /* draw the tree with ASCII instead of box-drawing characters */
};

void cp_report_options_init(struct cp_report_options *o);

/* Loads the measurement directory and writes the chosen view to out.
 * Returns 0 or a negative CP_E* code with cp_error() set. */
int cp_report_run(const char *dir, const struct cp_report_options *o, FILE *out);

/* For `callpath record`: prints the summary of the run in dir and its hottest calling
 * contexts (top-down, threshold 5%, at most top_n rows). Returns 0 or a negative CP_E*. */
int cp_report_print_summary(const char *dir, FILE *out, int top_n);

#endif
