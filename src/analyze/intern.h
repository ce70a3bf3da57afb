/* String interning: one stable copy of each distinct string, freed all at once. */
#ifndef CP_ANALYZE_INTERN_H
#define CP_ANALYZE_INTERN_H

#include <stddef.h>
#include <stdint.h>

struct cp_intern {
	char **slots; /* open addressing, NULL = empty */
	uint32_t *ids;
	size_t nslots, count;
	char **by_id; /* id -> string, in insertion order */
};

void cp_intern_init(struct cp_intern *in);
void cp_intern_release(struct cp_intern *in);
/* Returns the id of s (adding a copy when new). */
uint32_t cp_intern_id(struct cp_intern *in, const char *s);
/* The stable copy of s. */
const char *cp_intern(struct cp_intern *in, const char *s);

#endif
