/* The profile database file (SQLite): being written (see the report of issue 4). */
#include "db/db.h"

#include "base/error.h"

int cp_db_write(struct cp_db *db, const char *path)
{
	(void)db;
	return cp_error(CP_ENOTSUP, "DB: writing %s: not implemented yet", path);
}

int cp_db_read(struct cp_db *db, const char *path)
{
	(void)db;
	return cp_error(CP_ENOTSUP, "DB: reading %s: not implemented yet", path);
}

int cp_db_is_database(const char *path)
{
	(void)path;
	return 0;
}
