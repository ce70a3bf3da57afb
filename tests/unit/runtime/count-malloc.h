/* malloc, calloc, realloc and free interposed in a unit test program, counting in
 * count_malloc_calls the calls made while COUNT_MALLOC_WHEN (an expression the test
 * defines before including this) is true. */
#ifndef CP_TEST_COUNT_MALLOC_H
#define CP_TEST_COUNT_MALLOC_H

#include <stddef.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);
static volatile int count_malloc_calls;

void *malloc(size_t n)
{
	count_malloc_calls += !!(COUNT_MALLOC_WHEN);
	return __libc_malloc(n);
}

void *calloc(size_t a, size_t b)
{
	count_malloc_calls += !!(COUNT_MALLOC_WHEN);
	return __libc_calloc(a, b);
}

void *realloc(void *p, size_t n)
{
	count_malloc_calls += !!(COUNT_MALLOC_WHEN);
	return __libc_realloc(p, n);
}

void free(void *p)
{
	count_malloc_calls += (COUNT_MALLOC_WHEN) && p;
	__libc_free(p);
}

#endif
