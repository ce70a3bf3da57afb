#include "base/intern.h"

#include "base/xalloc.h"

#include <string.h>

void cp_intern_init(struct cp_intern *in)
{
	memset(in, 0, sizeof(*in));
}

void cp_intern_release(struct cp_intern *in)
{
	for (size_t i = 0; i < in->count; i++)
		free(in->by_id[i]);
	free(in->by_id);
	cp_hashtab_release(&in->tab);
	cp_intern_init(in);
}

static int str_eq(const void *ctx, uint32_t id, const void *key)
{
	const struct cp_intern *in = ctx;
	return !strcmp(in->by_id[id], key);
}

uint32_t cp_intern_id(struct cp_intern *in, const char *s)
{
	uint64_t h = cp_hash_str(s);
	uint32_t id = cp_hashtab_find(&in->tab, h, str_eq, in, s);
	if (id != CP_HASH_NONE)
		return id;
	XGROW(in->by_id, in->count + 1, in->alloc);
	in->by_id[in->count] = xstrdup(s);
	id = (uint32_t)in->count++;
	cp_hashtab_insert(&in->tab, h, id);
	return id;
}

const char *cp_intern(struct cp_intern *in, const char *s)
{
	uint32_t id = cp_intern_id(in, s); /* may move by_id: read it after */
	return in->by_id[id];
}
