#include "base/search.h"

#include <string.h>

size_t cp_upper_bound_u64(const void *base, size_t n, size_t stride, size_t at, uint64_t key)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint64_t v;
		memcpy(&v, (const char *)base + mid * stride + at, sizeof v);
		if (v <= key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}
