/* Helpers shared by the exporters (private to src/export/). */
#ifndef CP_EXPORT_IMPL_H
#define CP_EXPORT_IMPL_H

#include "db/db.h"
#include "export/export.h"

#include <stdio.h>

/* A frame of a call stack: a procedure frame, an inlined frame, or the partial-unwind
 * pseudo frame. */
static inline int cp_export_is_frame(const struct cp_db_scope *s)
{
	return s->kind == CP_DBK_PROC || s->kind == CP_DBK_INLINE || s->kind == CP_DBK_PARTIAL;
}

/* Nearest frame at or above scope; CP_DB_NONE when only the root is. */
uint32_t cp_export_frame_of(const struct cp_db *db, uint32_t scope);
/* Nearest procedure frame (CP_DBK_PROC) strictly above scope's frame... at or above scope. */
uint32_t cp_export_proc_frame_of(const struct cp_db *db, uint32_t scope);
/* Display name of a frame scope (procedure name, "[partial unwind]", "[unknown]"). */
const char *cp_export_frame_name(const struct cp_db *db, uint32_t frame);
/* Path of a file id, "" if none. */
const char *cp_export_file(const struct cp_db *db, uint32_t file);
/* The value (sum over profiles) recorded at scope itself, not at its descendants: the
 * database's exclusive value of a scope covers its whole body (nested loops, inlined code
 * and statements; db.h), so what sits at the scope itself is its exclusive value minus
 * that of its children in the same frame. Statements are the usual holders. */
double cp_export_excl(const struct cp_db *db, uint32_t scope, uint32_t metric);
static inline double cp_export_incl(const struct cp_db *db, uint32_t scope, uint32_t metric)
{
	return cp_db_stat_get(db, scope, metric, 1)->sum;
}
/* Fills frames[] with the frames from the outermost down to frame (inclusive); returns
 * their number (at most max; deeper stacks keep their innermost max frames). */
size_t cp_export_stack(const struct cp_db *db, uint32_t frame, uint32_t *frames, size_t max);
/* Per frame scope: the sum of the exclusive values of metric over the scopes whose
 * nearest frame it is (xcalloc'd, nscopes entries; the root's own values at index 0). */
double *cp_export_frame_self(const struct cp_db *db, uint32_t metric);

/* Calls of each procedure frame (CP_DBK_PROC scope): from the raw metric "calls" (exact
 * counts of `callpath probe`: its values in the frame's own body) when db has one, else
 * the frame's inclusive samples of metric (inclusive value / period, at least 1 where
 * the frame has cost). Returns an xcalloc'd array of nscopes counts (0 for non-frames);
 * *exact tells which. */
uint64_t *cp_export_call_counts(const struct cp_db *db, uint32_t metric, int *exact);

/* Checks db is finished and has a raw metric. */
int cp_export_check_db(const struct cp_db *db);
/* Every exporter's start: checks db and picks the metric to export (the option's, else the
 * first measured time metric, else the first measured one) into *metric. */
int cp_export_start(const struct cp_db *db, const struct cp_export_options *o, uint32_t *metric);

#endif
