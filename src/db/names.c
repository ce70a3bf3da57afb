#include "db/db.h"

#include <string.h>

static const char *const kind_names[] = {
    [CP_DBK_ROOT] = "root", [CP_DBK_PROC] = "procedure", [CP_DBK_INLINE] = "inlined",
    [CP_DBK_LOOP] = "loop", [CP_DBK_STMT] = "statement", [CP_DBK_PARTIAL] = "partial",
};

const char *cp_db_kind_name(enum cp_db_kind k)
{
	if ((unsigned)k < sizeof kind_names / sizeof kind_names[0] && kind_names[k])
		return kind_names[k];
	return "?";
}

static const char *const stat_names[] = {
    [CP_DB_STAT_SUM] = "sum", [CP_DB_STAT_MEAN] = "mean",     [CP_DB_STAT_MIN] = "min",
    [CP_DB_STAT_MAX] = "max", [CP_DB_STAT_STDDEV] = "stddev",
};

const char *cp_db_stat_name(enum cp_db_statkind s)
{
	if ((unsigned)s < sizeof stat_names / sizeof stat_names[0])
		return stat_names[s];
	return "?";
}

int cp_db_stat_parse(const char *s)
{
	for (size_t i = 0; i < sizeof stat_names / sizeof stat_names[0]; i++)
		if (!strcmp(s, stat_names[i]))
			return (int)i;
	return -1;
}
