/* Allocation that never returns NULL (offline tools only: aborts with a message on
 * exhaustion, since a half-built profile is worse than a clear failure). */
#ifndef CP_BASE_XALLOC_H
#define CP_BASE_XALLOC_H

#include <stddef.h>
#include <stdlib.h>

void *xmalloc(size_t n);
void *xcalloc(size_t count, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);

/* Grows *array (of element size elem) so that it holds at least need elements. */
#define XGROW(array, need, alloc)                                                                  \
	do {                                                                                       \
		if ((size_t)(need) > (alloc)) {                                                    \
			size_t xg_n = (alloc) ? (alloc)*2 : 16;                                    \
			while (xg_n < (size_t)(need))                                              \
				xg_n *= 2;                                                         \
			(array) = xrealloc((array), xg_n * sizeof(*(array)));                      \
			(alloc) = xg_n;                                                            \
		}                                                                                  \
	} while (0)

#endif
