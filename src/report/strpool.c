#include "report/strpool.h"

#include "base/xalloc.h"

#include <stdlib.h>
#include <string.h>

uint64_t cp_hash_mix(uint64_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
	h *= 0xff51afd7ed558ccdull;
	return h ^ (h >> 32);
}

uint64_t cp_hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ull;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

void cp_strpool_init(struct cp_strpool *p)
{
	memset(p, 0, sizeof *p);
}

void cp_strpool_release(struct cp_strpool *p)
{
	for (size_t i = 0; i < p->cap; i++)
		free(p->slots[i]);
	free(p->slots);
	memset(p, 0, sizeof *p);
}

static void strpool_grow(struct cp_strpool *p)
{
	size_t cap = p->cap ? p->cap * 2 : 256;
	char **slots = xcalloc(cap, sizeof(*slots));
	for (size_t i = 0; i < p->cap; i++) {
		if (!p->slots[i])
			continue;
		size_t j = cp_hash_str(p->slots[i]) & (cap - 1);
		while (slots[j])
			j = (j + 1) & (cap - 1);
		slots[j] = p->slots[i];
	}
	free(p->slots);
	p->slots = slots;
	p->cap = cap;
}

const char *cp_strpool_get(struct cp_strpool *p, const char *s)
{
	if (!s)
		return NULL;
	if ((p->n + 1) * 2 > p->cap)
		strpool_grow(p);
	size_t j = cp_hash_str(s) & (p->cap - 1);
	while (p->slots[j]) {
		if (!strcmp(p->slots[j], s))
			return p->slots[j];
		j = (j + 1) & (p->cap - 1);
	}
	p->slots[j] = xstrdup(s);
	p->n++;
	return p->slots[j];
}

void cp_itab_init(struct cp_itab *t)
{
	memset(t, 0, sizeof *t);
}

void cp_itab_release(struct cp_itab *t)
{
	free(t->idx);
	free(t->hash);
	memset(t, 0, sizeof *t);
}

uint32_t cp_itab_find(const struct cp_itab *t, uint64_t h,
		      int (*eq)(const void *ctx, uint32_t idx, const void *key), const void *ctx,
		      const void *key)
{
	if (!t->cap)
		return UINT32_MAX;
	for (size_t j = h & (t->cap - 1); t->idx[j] != UINT32_MAX; j = (j + 1) & (t->cap - 1))
		if (t->hash[j] == h && eq(ctx, t->idx[j], key))
			return t->idx[j];
	return UINT32_MAX;
}

static void itab_put(uint32_t *idx, uint64_t *hash, size_t cap, uint64_t h, uint32_t v)
{
	size_t j = h & (cap - 1);
	while (idx[j] != UINT32_MAX)
		j = (j + 1) & (cap - 1);
	idx[j] = v;
	hash[j] = h;
}

void cp_itab_insert(struct cp_itab *t, uint64_t h, uint32_t v)
{
	if ((t->n + 1) * 2 > t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 256;
		uint32_t *idx = xmalloc(cap * sizeof(*idx));
		uint64_t *hash = xmalloc(cap * sizeof(*hash));
		memset(idx, 0xff, cap * sizeof(*idx));
		for (size_t i = 0; i < t->cap; i++)
			if (t->idx[i] != UINT32_MAX)
				itab_put(idx, hash, cap, t->hash[i], t->idx[i]);
		free(t->idx);
		free(t->hash);
		t->idx = idx;
		t->hash = hash;
		t->cap = cap;
	}
	itab_put(t->idx, t->hash, t->cap, h, v);
	t->n++;
}
