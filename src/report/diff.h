/* callpath diff: two profiles (databases or measurement directories) compared per calling
 * context, loop and line. Scopes are matched by load module name (not path), procedure,
 * file name and line -- never by address -- so two builds of a program compare. The result
 * is a view (view.h) whose metrics are, per metric common to both profiles, A, B, their
 * difference B - A, the sampling noise of that difference and its ratio to the noise, and is
 * rendered by the report's renderers (render.h) or as differential folded stacks. */
#ifndef CP_REPORT_DIFF_H
#define CP_REPORT_DIFF_H

#include "report/report.h"

#include <stdio.h>

enum cp_diff_normalize {
	CP_DIFF_ABSOLUTE = 0, /* values as measured */
	CP_DIFF_TOTAL = 1,    /* B scaled so that its total equals A's (shares compared) */
};

/* The columns of one compared metric in the difference view, in this order. */
enum cp_diff_col {
	CP_DIFF_A = 0,
	CP_DIFF_B,
	CP_DIFF_DELTA, /* B - A */
	CP_DIFF_NOISE, /* one standard deviation of B - A from the sample counts (Poisson) */
	CP_DIFF_Z,     /* (B - A) / noise */
	CP_DIFF_NCOLS
};

/* A difference beyond this many standard deviations of the noise is a change. */
#define CP_DIFF_SIGMAS 3.0

struct cp_diff_options {
	/* view, metrics (NAME: a compared metric; NAME=FORMULA: derived in both), sort,
	 * threshold, depth, focus, flatten, format, ascii, summary, progress */
	struct cp_report_options report;
	enum cp_diff_normalize normalize;
	int folded; /* write differential folded stacks ("frame;frame A B") instead */
};

void cp_diff_options_init(struct cp_diff_options *o);

/* Opens a and b (each a database or a measurement directory, analyzed first as by
 * cp_profile_load) and writes their comparison to out. 0 or a negative CP_E* code with
 * cp_error() set (naming which of the two failed). */
int cp_diff_run(const char *a, const char *b, const struct cp_diff_options *o, FILE *out);

#endif
