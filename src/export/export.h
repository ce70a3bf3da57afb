/* Exporters of a finished profile database (db/db.h) to the formats of other tools:
 * callgrind (KCachegrind, callgrind_annotate), pprof's gzipped profile.proto (go tool
 * pprof), folded stacks (flamegraph.pl, speedscope), speedscope JSON and GNU gmon.out
 * (gprof; see gmon.h). One file per format; `callpath export` (src/cli/cmd-export.c) is
 * the command. Only raw metrics are exported (derived ones are not additive over a call
 * tree); totals of every export equal the database's within the format's rounding. */
#ifndef CP_EXPORT_EXPORT_H
#define CP_EXPORT_EXPORT_H

#include "db/db.h"

#include <stdio.h>

enum cp_export_format {
	CP_EXPORT_CALLGRIND = 0,
	CP_EXPORT_PPROF,
	CP_EXPORT_FOLDED,
	CP_EXPORT_SPEEDSCOPE,
	CP_EXPORT_GMON,
	CP_EXPORT_NFORMATS
};

/* "callgrind", "pprof", "folded", "speedscope", "gmon"; -1 if unknown. */
int cp_export_format_parse(const char *name);
const char *cp_export_format_name(enum cp_export_format f);
/* Default output file: callgrind.out.callpath, profile.pb.gz, profile.folded,
 * profile.speedscope.json, gmon.out. */
const char *cp_export_default_file(enum cp_export_format f);

struct cp_export_options {
	/* The metric of single-metric formats (folded, speedscope, gmon; pprof's default
	 * sample type). CP_DB_NONE: the first raw time metric (unit "ns"), else metric 0. */
	uint32_t metric;
	/* gmon: the executable module (CP_DB_NONE: the CP_DB_MOD_EXE module with the most
	 * of the metric). */
	uint32_t module;
};

void cp_export_options_init(struct cp_export_options *o);

/* The metric o selects, checked: a raw metric of db. CP_DB_NONE with cp_error() set. */
uint32_t cp_export_metric(const struct cp_db *db, const struct cp_export_options *o);

/* Each writes db (finished) to out. 0 or a negative CP_E* code with cp_error() set. */
int cp_export_callgrind(const struct cp_db *db, const struct cp_export_options *o, FILE *out);
int cp_export_pprof(const struct cp_db *db, const struct cp_export_options *o, FILE *out);
int cp_export_folded(const struct cp_db *db, const struct cp_export_options *o, FILE *out);
int cp_export_speedscope(const struct cp_db *db, const struct cp_export_options *o, FILE *out);
int cp_export_gmon(const struct cp_db *db, const struct cp_export_options *o, FILE *out);

/* Writes format f to path ("-" = standard output); on failure no partial file is left. */
int cp_export_write(const struct cp_db *db, enum cp_export_format f,
		    const struct cp_export_options *o, const char *path);

#endif
