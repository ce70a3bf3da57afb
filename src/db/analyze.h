/* Correlation of a measurement directory with the structure of its load modules into a
 * profile database (db.h): `callpath analyze`, and the way every reader (report, export,
 * record's summary) opens a profile. Implemented in src/db/correlate/. */
#ifndef CP_DB_ANALYZE_H
#define CP_DB_ANALYZE_H

#include "db/db.h"

#include <stdio.h>

struct cp_analyze_options {
	int jobs;	      /* parallel `struct` jobs for cache misses (0 = number of CPUs) */
	FILE *progress;	      /* progress and warnings for humans (stderr), or NULL for none */
	const char **derived; /* "NAME=FORMULA" derived metrics to add, nderived of them */
	size_t nderived;
	int no_write; /* cp_profile_open: never write DIR/callpath.db */
};

void cp_analyze_options_init(struct cp_analyze_options *o);

/* Builds a finished database from the measurement directory dir: every process image and
 * thread file, each context correlated with its modules' structure (from the structure
 * cache, running `struct` where it misses), run metadata, presets and o->derived metrics.
 * 0 or a negative CP_E* code with cp_error() set. */
int cp_analyze_dir(const char *dir, const struct cp_analyze_options *o, struct cp_db *db);

/* Opens a profile for reading, whatever path names:
 *   - a database file: read it;
 *   - a measurement directory: read DIR/callpath.db when it was made from exactly the
 *     measurement files now in DIR, each unchanged (cp_db_sources_current: size, mtime
 *     and header hash, not a comparison of mtimes), else analyze DIR and (unless
 *     o->no_write, or DIR is not writable) save the result as DIR/callpath.db.
 * o may be NULL (defaults, progress on stderr). The derived metrics of o are added in
 * both cases. 0 or a negative CP_E* code with cp_error() set. */
int cp_profile_open(const char *path, const struct cp_analyze_options *o, struct cp_db *db);

#endif
