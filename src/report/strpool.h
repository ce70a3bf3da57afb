/* Interned strings and an index hash table: equal strings share one pointer, so the
 * report's tree keys compare by pointer. */
#ifndef CP_REPORT_STRPOOL_H
#define CP_REPORT_STRPOOL_H

#include <stddef.h>
#include <stdint.h>

struct cp_strpool {
	char **slots;
	size_t cap, n;
};

void cp_strpool_init(struct cp_strpool *p);
void cp_strpool_release(struct cp_strpool *p);
/* The pooled copy of s (NULL for NULL), valid until the pool is released. */
const char *cp_strpool_get(struct cp_strpool *p, const char *s);

/* Open-addressing table of uint32 indices; the caller hashes and compares its own keys. */
struct cp_itab {
	uint32_t *idx;
	uint64_t *hash;
	size_t cap, n;
};

void cp_itab_init(struct cp_itab *t);
void cp_itab_release(struct cp_itab *t);
/* Visits candidates with this hash: returns the first index for which eq(ctx, idx, key)
 * holds, or UINT32_MAX. */
uint32_t cp_itab_find(const struct cp_itab *t, uint64_t h,
		      int (*eq)(const void *ctx, uint32_t idx, const void *key), const void *ctx,
		      const void *key);
void cp_itab_insert(struct cp_itab *t, uint64_t h, uint32_t idx);

uint64_t cp_hash_mix(uint64_t h, uint64_t v);
uint64_t cp_hash_str(const char *s);

#endif
