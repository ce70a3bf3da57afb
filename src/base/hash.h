/* Hashing and the one hash table of the offline tools.
 *
 * cp_hashtab maps a 64-bit hash to uint32 indices into the caller's own array of entries:
 * the caller hashes its keys and says when an entry equals a key, so one table serves
 * strings, pointers and composite keys alike (open addressing, linear probing, grown to
 * stay under 3/4 full). Entries are never removed; the caller keeps them in insertion
 * order, so nothing depends on the table's layout.
 *
 * cp_fnv1a() is FNV-1a 64 from any start value: the structure file format's checksum and
 * the structure cache's file names use it (with their own start, CP_ST_CHECKSUM_SEED), so
 * its results must never change. */
#ifndef CP_BASE_HASH_H
#define CP_BASE_HASH_H

#include <stddef.h>
#include <stdint.h>

#define CP_FNV1A_INIT 0xcbf29ce484222325ull
#define CP_HASH_NONE UINT32_MAX

/* FNV-1a 64 of n bytes, continuing from h (CP_FNV1A_INIT to start). */
uint64_t cp_fnv1a(uint64_t h, const void *p, size_t n);
/* FNV-1a 64 of a NUL-terminated string. */
uint64_t cp_hash_str(const char *s);
/* Combines h with the value v (order matters). */
uint64_t cp_hash_mix(uint64_t h, uint64_t v);
/* A well-spread hash of one 64-bit value (e.g. a pointer). */
uint64_t cp_hash_u64(uint64_t v);

struct cp_hashtab {
	struct cp_hash_slot {
		uint32_t idx; /* index + 1, 0 = empty */
		uint32_t hash;
	} * slots;
	size_t cap, n;
};

/* Does entry idx of ctx equal key? */
typedef int (*cp_hash_eq_fn)(const void *ctx, uint32_t idx, const void *key);

void cp_hashtab_init(struct cp_hashtab *t);
void cp_hashtab_release(struct cp_hashtab *t);
/* Empties the table, keeping its memory. */
void cp_hashtab_clear(struct cp_hashtab *t);
/* The first index with hash h for which eq(ctx, idx, key) holds, or CP_HASH_NONE. */
uint32_t cp_hashtab_find(const struct cp_hashtab *t, uint64_t h, cp_hash_eq_fn eq, const void *ctx,
			 const void *key);
/* Adds index idx (< CP_HASH_NONE) under hash h; the caller checked it is not there yet. */
void cp_hashtab_insert(struct cp_hashtab *t, uint64_t h, uint32_t idx);

#endif
