#include "base/search.h"

#include <string.h>

static uint64_t field(const void *base, size_t i, size_t stride, size_t at)
{
	uint64_t v;
	memcpy(&v, (const char *)base + i * stride + at, sizeof v);
	return v;
}

/* The first record whose field is above key (upper), or key or above (!upper). */
static size_t bound(const void *base, size_t n, size_t stride, size_t at, uint64_t key, int upper)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint64_t v = field(base, mid, stride, at);
		if (v < key || (upper && v == key))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

size_t cp_upper_bound_u64(const void *base, size_t n, size_t stride, size_t at, uint64_t key)
{
	return bound(base, n, stride, at, key, 1);
}

size_t cp_lower_bound_u64(const void *base, size_t n, size_t stride, size_t at, uint64_t key)
{
	return bound(base, n, stride, at, key, 0);
}

size_t cp_find_u64(const void *base, size_t n, size_t stride, size_t at, uint64_t key)
{
	size_t i = bound(base, n, stride, at, key, 0);
	return i < n && field(base, i, stride, at) == key ? i : n;
}
