/* Folded stacks ("a;b;c 123" per line), the input of flamegraph.pl and speedscope: one
 * line per distinct frame path holding exclusive cost of the metric, frames from the
 * outermost in, inlined frames as frames of their own. Values are rounded to integers
 * (the readers parse integers); paths whose value rounds to 0 are left out. */
#include "export/export-impl.h"
#include "export/export.h"

#include "base/error.h"
#include "base/xalloc.h"

#include <math.h>
#include <stdlib.h>

#define STACK_MAX 4096

/* Frame names may not contain the separators. */
static void put_name(FILE *out, const char *s)
{
	for (; *s; s++) {
		char c = *s;
		if (c == ';')
			c = ':';
		else if (c == '\n' || c == '\r' || c == '\t')
			c = ' ';
		fputc(c, out);
	}
}

int cp_export_folded(const struct cp_db *db, const struct cp_export_options *o, FILE *out)
{
	uint32_t m;
	int rc = cp_export_start(db, o, &m);
	if (rc)
		return rc;
	double *self = cp_export_frame_self(db, m);
	uint32_t *stack = xmalloc(STACK_MAX * sizeof(*stack));
	for (size_t f = 0; f < db->nscopes; f++) {
		long long v = llround(self[f]);
		if (v <= 0)
			continue;
		size_t n = f ? cp_export_stack(db, (uint32_t)f, stack, STACK_MAX) : 0;
		if (n == 0) {
			fputs("[unknown]", out);
		}
		for (size_t i = 0; i < n; i++) {
			if (i)
				fputc(';', out);
			put_name(out, cp_export_frame_name(db, stack[i]));
		}
		fprintf(out, " %lld\n", v);
	}
	free(stack);
	free(self);
	return 0;
}
