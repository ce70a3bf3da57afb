/* String interning: one stable copy of each distinct string, freed all at once; equal
 * strings share one pointer, so their users compare them by pointer. */
#ifndef CP_BASE_INTERN_H
#define CP_BASE_INTERN_H

#include "base/hash.h"

#include <stddef.h>
#include <stdint.h>

struct cp_intern {
	struct cp_hashtab tab;
	char **by_id; /* id -> string, in insertion order */
	size_t count, alloc;
};

void cp_intern_init(struct cp_intern *in);
void cp_intern_release(struct cp_intern *in);
/* Returns the id of s (adding a copy when new). */
uint32_t cp_intern_id(struct cp_intern *in, const char *s);
/* The stable copy of s, valid until the table is released. */
const char *cp_intern(struct cp_intern *in, const char *s);

#endif
