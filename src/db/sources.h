/* Stamps of the measurement files a profile database was made from (struct cp_db_source
 * in db.h; table `source` in docs/format.md), and the check that decides whether a saved
 * database is still current. Implemented in sources.c. */
#ifndef CP_DB_SOURCES_H
#define CP_DB_SOURCES_H

#include "db/db.h"

struct cp_mf_list;

/* Stamps file name of the directory dirfd: size, mtime (ns) and the hash of its first
 * CP_DB_SOURCE_HEAD bytes; s->name = name (not copied). 0, or -1 if it cannot be read. */
int cp_db_source_stamp(int dirfd, const char *name, struct cp_db_source *s);
/* Adds a stamp for every file of the listing to db->run.sources (before reading them, so
 * that a file that changes while it is read makes the database stale). */
void cp_db_sources_record(struct cp_db *db, const struct cp_mf_list *l);
/* 1 when db_path holds stamps for exactly the measurement files now in dir and every one
 * is unchanged; 0 otherwise (no database, an older schema, a file added, removed or
 * changed). Never sets cp_error. */
int cp_db_sources_current(const char *dir, const char *db_path);

#endif
