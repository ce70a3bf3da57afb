/* speedscope's JSON file format (https://www.speedscope.app/file-format-schema.json): one
 * "sampled" profile of the chosen metric over all threads, a sample per distinct frame path
 * holding exclusive cost (weight = that cost in the metric's unit), frames shared by
 * procedure (name, file, declaration line). */
#include "export/export-impl.h"
#include "export/export.h"

#include "base/error.h"
#include "base/strbuf.h"
#include "base/xalloc.h"

#include <stdlib.h>
#include <string.h>

#define STACK_MAX 4096

static const char *speedscope_unit(const char *unit)
{
	if (unit && !strcmp(unit, "ns"))
		return "nanoseconds";
	if (unit && !strcmp(unit, "bytes"))
		return "bytes";
	return "none";
}

static void put_json(FILE *out, const char *s)
{
	struct strbuf sb;
	strbuf_init(&sb);
	strbuf_addch(&sb, '"'); /* strbuf_add_json escapes the contents only */
	strbuf_add_json(&sb, s ? s : "");
	strbuf_addch(&sb, '"');
	fwrite(sb.buf, 1, sb.len, out);
	strbuf_release(&sb);
}

/* Frame index of a frame scope: procedures by id, then [partial unwind], [unknown]. */
static uint32_t frame_index(const struct cp_db *db, uint32_t f)
{
	const struct cp_db_scope *s = &db->scopes[f];
	if ((s->kind == CP_DBK_PROC || s->kind == CP_DBK_INLINE) && s->proc < db->nprocs)
		return s->proc;
	if (s->kind == CP_DBK_PARTIAL)
		return (uint32_t)db->nprocs;
	return (uint32_t)db->nprocs + 1;
}

static void put_frames(const struct cp_db *db, FILE *out)
{
	fputs("{\"frames\":[", out);
	for (size_t p = 0; p < db->nprocs; p++) {
		const struct cp_db_proc *pr = &db->procs[p];
		fputs(p ? ",\n{\"name\":" : "\n{\"name\":", out);
		put_json(out, pr->name ? pr->name : "[unknown]");
		if (pr->file != CP_DB_NONE && pr->file < db->nfiles) {
			fputs(",\"file\":", out);
			put_json(out, cp_export_file(db, pr->file));
			if (pr->line)
				fprintf(out, ",\"line\":%u", pr->line);
		}
		fputc('}', out);
	}
	fprintf(out, "%s{\"name\":\"[partial unwind]\"},\n{\"name\":\"[unknown]\"}]}",
		db->nprocs ? ",\n" : "\n");
}

int cp_export_speedscope(const struct cp_db *db, const struct cp_export_options *o, FILE *out)
{
	uint32_t m;
	int rc = cp_export_start(db, o, &m);
	if (rc)
		return rc;
	const struct cp_db_metric *met = &db->metrics[m];
	double *self = cp_export_frame_self(db, m);
	uint32_t *stack = xmalloc(STACK_MAX * sizeof(*stack));
	double total = 0;
	for (size_t f = 0; f < db->nscopes; f++)
		total += self[f];

	fputs("{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\",\n", out);
	fprintf(out, "\"exporter\":\"callpath %s\",\n\"name\":", CALLPATH_VERSION);
	put_json(out, db->run.command ? db->run.command : "callpath profile");
	fputs(",\n\"activeProfileIndex\":0,\n\"shared\":", out);
	put_frames(db, out);
	fputs(",\n\"profiles\":[{\"type\":\"sampled\",\"name\":", out);
	put_json(out, met->name);
	fprintf(out, ",\"unit\":\"%s\",\"startValue\":0,\"endValue\":%.17g,\n\"samples\":[",
		speedscope_unit(met->unit), total);
	int first = 1;
	for (size_t f = 0; f < db->nscopes; f++) {
		if (self[f] == 0)
			continue;
		size_t n = f ? cp_export_stack(db, (uint32_t)f, stack, STACK_MAX) : 0;
		fputs(first ? "\n[" : ",\n[", out);
		first = 0;
		if (n == 0)
			fprintf(out, "%u", (unsigned)db->nprocs + 1);
		for (size_t i = 0; i < n; i++)
			fprintf(out, i ? ",%u" : "%u", frame_index(db, stack[i]));
		fputc(']', out);
	}
	fputs("],\n\"weights\":[", out);
	first = 1;
	for (size_t f = 0; f < db->nscopes; f++) {
		if (self[f] == 0)
			continue;
		fprintf(out, first ? "%.17g" : ",%.17g", self[f]);
		first = 0;
	}
	fputs("]}]}\n", out);
	free(stack);
	free(self);
	return 0;
}
