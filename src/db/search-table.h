/* The `search` table of a profile database: the history graph of `callpath search`
 * (docs/cmd-search.md, docs/format.md "The search table"). Written by search into the
 * database its run's analysis made; an optional table, so no schema version change. */
#ifndef CP_DB_SEARCH_TABLE_H
#define CP_DB_SEARCH_TABLE_H

#include <stddef.h>
#include <stdint.h>

struct cp_db_search_row {
	int id, parent; /* parent -1: a root */
	const char *hypothesis, *kind, *focus, *function, *file, *state, *note;
	int line;
	uint64_t address;
	double value, started_s, decided_s, calls, iterations, probe_time_ns;
	int deep_start;
	int rank; /* among the bottlenecks, 1 = first; 0 = not a bottleneck */
};

/* Replaces the search table of the database at path with rows. 0 or CP_EIO. */
int cp_db_put_search(const char *path, const struct cp_db_search_row *rows, size_t n);

#endif
