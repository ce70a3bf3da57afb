#include "analyze/intern.h"

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
	free(in->slots);
	free(in->ids);
	cp_intern_init(in);
}

static uint64_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ull; /* FNV-1a */
	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ull;
	return h;
}

static void grow(struct cp_intern *in)
{
	size_t n = in->nslots ? in->nslots * 2 : 256;
	char **slots = xcalloc(n, sizeof(*slots));
	uint32_t *ids = xcalloc(n, sizeof(*ids));
	for (size_t i = 0; i < in->nslots; i++) {
		if (!in->slots[i])
			continue;
		size_t j = hash_str(in->slots[i]) & (n - 1);
		while (slots[j])
			j = (j + 1) & (n - 1);
		slots[j] = in->slots[i];
		ids[j] = in->ids[i];
	}
	free(in->slots);
	free(in->ids);
	in->slots = slots;
	in->ids = ids;
	in->nslots = n;
	in->by_id = xrealloc(in->by_id, n / 2 * sizeof(*in->by_id));
}

uint32_t cp_intern_id(struct cp_intern *in, const char *s)
{
	if ((in->count + 1) * 2 > in->nslots)
		grow(in);
	size_t j = hash_str(s) & (in->nslots - 1);
	while (in->slots[j]) {
		if (!strcmp(in->slots[j], s))
			return in->ids[j];
		j = (j + 1) & (in->nslots - 1);
	}
	char *copy = xstrdup(s);
	in->slots[j] = copy;
	in->ids[j] = (uint32_t)in->count;
	in->by_id[in->count] = copy;
	return (uint32_t)in->count++;
}

const char *cp_intern(struct cp_intern *in, const char *s)
{
	uint32_t id = cp_intern_id(in, s); /* may move by_id */
	return in->by_id[id];
}
