/* String and memory helpers that the compiler cannot turn into interposable libc calls
 * with locks (they are plain loops; the few libc string functions are AS-safe anyway, but
 * these keep signal-time code independent of which libc is underneath). */
#include "base/sigsafe/sigsafe.h"

#include "base/sigsafe/banned.h"

size_t cp_ss_strlen(const char *s)
{
	size_t n = 0;
	while (s[n])
		n++;
	return n;
}

int cp_ss_strncmp(const char *a, const char *b, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char ca = (unsigned char)a[i], cb = (unsigned char)b[i];
		if (ca != cb)
			return ca < cb ? -1 : 1;
		if (!ca)
			return 0;
	}
	return 0;
}

int cp_ss_strcmp(const char *a, const char *b)
{
	return cp_ss_strncmp(a, b, (size_t)-1);
}

size_t cp_ss_strlcpy(char *dst, const char *src, size_t cap)
{
	size_t n = cp_ss_strlen(src);
	if (cap) {
		size_t k = n < cap - 1 ? n : cap - 1;
		for (size_t i = 0; i < k; i++)
			dst[i] = src[i];
		dst[k] = 0;
	}
	return n;
}

void *cp_ss_memcpy(void *dst, const void *src, size_t n)
{
	unsigned char *d = dst;
	const unsigned char *s = src;
	while (n--)
		*d++ = *s++;
	return dst;
}

void *cp_ss_memset(void *dst, int c, size_t n)
{
	unsigned char *d = dst;
	while (n--)
		*d++ = (unsigned char)c;
	return dst;
}

int cp_ss_parse_u64(const char *s, uint64_t *out, const char **end)
{
	uint64_t v = 0;
	const char *p = s;
	if (*p < '0' || *p > '9')
		return -1;
	for (; *p >= '0' && *p <= '9'; p++) {
		uint64_t d = (uint64_t)(*p - '0');
		if (v > (UINT64_MAX - d) / 10)
			return -1;
		v = v * 10 + d;
	}
	static const struct {
		const char *suffix;
		uint64_t mul;
	} units[] = {{"ns", 1}, {"us", 1000}, {"ms", 1000000}, {"s", 1000000000}};
	for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
		size_t n = cp_ss_strlen(units[i].suffix);
		if (!cp_ss_strncmp(p, units[i].suffix, n)) {
			if (v > UINT64_MAX / units[i].mul)
				return -1;
			v *= units[i].mul;
			p += n;
			break;
		}
	}
	*out = v;
	if (end)
		*end = p;
	return 0;
}
