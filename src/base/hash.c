#include "base/hash.h"

#include "base/xalloc.h"

#include <stdlib.h>
#include <string.h>

uint64_t cp_fnv1a(uint64_t h, const void *p, size_t n)
{
	const uint8_t *b = p;
	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 0x100000001b3ull;
	return h;
}

uint64_t cp_hash_str(const char *s)
{
	return cp_fnv1a(CP_FNV1A_INIT, s, strlen(s));
}

uint64_t cp_hash_mix(uint64_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
	h *= 0xff51afd7ed558ccdull;
	return h ^ (h >> 33);
}

uint64_t cp_hash_u64(uint64_t v)
{
	v ^= v >> 33;
	v *= 0xff51afd7ed558ccdull;
	v ^= v >> 33;
	v *= 0xc4ceb9fe1a85ec53ull;
	return v ^ (v >> 33);
}

void cp_hashtab_init(struct cp_hashtab *t)
{
	memset(t, 0, sizeof *t);
}

void cp_hashtab_release(struct cp_hashtab *t)
{
	free(t->slots);
	cp_hashtab_init(t);
}

void cp_hashtab_clear(struct cp_hashtab *t)
{
	if (t->n)
		memset(t->slots, 0, t->cap * sizeof *t->slots);
	t->n = 0;
}

/* The table keeps the low 32 bits of each hash: enough to pick the slot of any table that
 * fits in memory, and to skip most unequal entries without calling eq. */
uint32_t cp_hashtab_find(const struct cp_hashtab *t, uint64_t h, cp_hash_eq_fn eq, const void *ctx,
			 const void *key)
{
	if (!t->cap)
		return CP_HASH_NONE;
	uint32_t h32 = (uint32_t)h;
	size_t mask = t->cap - 1;
	for (size_t i = h32 & mask; t->slots[i].idx; i = (i + 1) & mask)
		if (t->slots[i].hash == h32 && eq(ctx, t->slots[i].idx - 1, key))
			return t->slots[i].idx - 1;
	return CP_HASH_NONE;
}

static void put(struct cp_hashtab *t, uint32_t h32, uint32_t idx_plus1)
{
	size_t mask = t->cap - 1, i = h32 & mask;
	while (t->slots[i].idx)
		i = (i + 1) & mask;
	t->slots[i].idx = idx_plus1;
	t->slots[i].hash = h32;
}

static void grow(struct cp_hashtab *t)
{
	struct cp_hashtab old = *t;
	t->cap = old.cap ? old.cap * 2 : 64;
	t->slots = xcalloc(t->cap, sizeof *t->slots);
	for (size_t i = 0; i < old.cap; i++)
		if (old.slots[i].idx)
			put(t, old.slots[i].hash, old.slots[i].idx);
	free(old.slots);
}

void cp_hashtab_insert(struct cp_hashtab *t, uint64_t h, uint32_t idx)
{
	if ((t->n + 1) * 4 > t->cap * 3)
		grow(t);
	put(t, (uint32_t)h, idx + 1);
	t->n++;
}
