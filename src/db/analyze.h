/* Correlation of a measurement directory with the structure of its load modules into a
 * profile database (db.h): `callpath analyze`, and the way every reader (report, export,
 * record's summary) opens a profile. Implemented in src/db/correlate/. */
#ifndef CP_DB_ANALYZE_H
#define CP_DB_ANALYZE_H

#include "db/db.h"

#include <stdio.h>

struct cp_analyze_options {
	int jobs;	/* threads correlating and recovering structure (0 = number of CPUs) */
	FILE *progress; /* progress and warnings for humans (stderr), or NULL for none */
	const char **derived; /* "NAME=FORMULA" derived metrics to add, nderived of them */
	size_t nderived;
	int no_write; /* cp_profile_open: never write DIR/callpath.db */
	/* cp_analyze_dir: leave the database unfinished, for cp_db_write, which finishes it
	 * while it writes the tables that do not need it (callpath analyze) */
	int defer_finish;
};

void cp_analyze_options_init(struct cp_analyze_options *o);

/* Builds a finished database from the measurement directory dir: every process image and
 * thread file, each context correlated with its modules' structure (from the structure
 * cache, running `struct` where it misses), run metadata, presets and o->derived metrics.
 * 0 or a negative CP_E* code with cp_error() set. */
int cp_analyze_dir(const char *dir, const struct cp_analyze_options *o, struct cp_db *db);

/* The analysis in pieces, for callpath-analyze-mpi (cp_analyze_dir is begin, every image,
 * end): every piece lists the directory; the piece that writes scans the process files
 * into its database; each piece correlates a range of process images into a database;
 * the databases of the pieces are merged in image order (cp_db_merge) into the first,
 * which `end` finishes. The result is cp_analyze_dir's database, id for id. */
struct cp_analysis;
/* Lists dir; with db (initialized here), scans the process files into it: run metadata,
 * notes, warnings, modules, metrics. *out is set even on failure (cp_analysis_free). o
 * may be NULL (defaults) and must outlive the analysis. */
int cp_analysis_begin(struct cp_analysis **out, const char *dir, const struct cp_analyze_options *o,
		      struct cp_db *db);
size_t cp_analysis_nimages(const struct cp_analysis *a);
/* What every piece needs from the scan (which time metric OpenMP waits split), as bytes:
 * after begin, the scanning piece's are copied into the others' (MPI_Bcast from rank 0)
 * before they correlate. */
void *cp_analysis_shared(struct cp_analysis *a, size_t *size);
/* Correlates the threads of process images [lo, hi) (in start order) into db: begin's
 * database, or another one (cp_db_init'ed by the caller) to be merged into it. */
int cp_analysis_images(struct cp_analysis *a, size_t lo, size_t hi, struct cp_db *db);
/* Begin's database, every piece merged into it: run metadata, presets, derived
 * metrics, cp_db_finish. */
int cp_analysis_end(struct cp_analysis *a);
void cp_analysis_free(struct cp_analysis *a);

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
