/* Entry points of callpath report (first increment: the API; the views follow). */
#include "report/report.h"

#include "base/error.h"

#include <string.h>

void cp_report_options_init(struct cp_report_options *o)
{
	memset(o, 0, sizeof *o);
	o->threshold = -1;
	o->thread = CP_REPORT_ALL_THREADS;
	o->summary = 1;
}

int cp_report_run(const char *dir, const struct cp_report_options *o, FILE *out)
{
	return cp_error(CP_ENOTSUP, "report of %s: not implemented yet", dir);
}

int cp_report_print_summary(const char *dir, FILE *out, int top_n)
{
	return cp_error(CP_ENOTSUP, "summary of %s: not implemented yet", dir);
}
