/* Shell globbing as fnmatch(3) with no flags does it, byte by byte: the same result in
 * the CLI and in any program the runtime is preloaded into, whatever its locale (glibc's
 * fnmatch converts to wide characters in a multibyte locale, and allocates for long
 * names), and no allocation. */
#include "patch/select.h"

#include <string.h>

/* Length of the character class name at p ("[:alpha:]" at p), or 0. */
static int class_len(const char *p)
{
	if (p[0] != '[' || p[1] != ':')
		return 0;
	for (int i = 2; p[i] && p[i] != ']'; i++)
		if (p[i] == ':' && p[i + 1] == ']')
			return i + 2;
	return 0;
}

static int in_class(const char *p, int len, unsigned char c)
{
	static const struct {
		const char *name;
		const char *lo, *hi; /* ranges */
	} classes[] = {
	    {"alpha", "aA", "zZ"},     {"digit", "0", "9"},
	    {"alnum", "aA0", "zZ9"},   {"upper", "A", "Z"},
	    {"lower", "a", "z"},       {"xdigit", "0aA", "9fF"},
	    {"space", "\t ", "\r "},   {"blank", "\t ", "\t "},
	    {"punct", "!:[{", "/@`~"}, {"cntrl", "\1\177", "\37\177"},
	    {"print", " ", "~"},       {"graph", "!", "~"},
	};
	for (size_t i = 0; i < sizeof classes / sizeof classes[0]; i++) {
		size_t n = strlen(classes[i].name);
		if ((size_t)len - 4 != n || strncmp(p + 2, classes[i].name, n))
			continue;
		for (size_t k = 0; classes[i].lo[k]; k++)
			if ((unsigned char)classes[i].lo[k] <= c &&
			    c <= (unsigned char)classes[i].hi[k])
				return 1;
		return 0;
	}
	return 0;
}

/* The end of the bracket expression starting at p ('['): the byte after its ']', or NULL
 * when it is not closed (then '[' is an ordinary character). */
static const char *bracket_end(const char *p)
{
	p++;
	if (*p == '!' || *p == '^')
		p++;
	if (*p == ']')
		p++;
	while (*p && *p != ']') {
		int k = class_len(p);
		p += k ? k : *p == '\\' && p[1] ? 2 : 1;
	}
	return *p ? p + 1 : NULL;
}

static int bracket_match(const char *p, const char *end, unsigned char c)
{
	int negate = 0, found = 0, k;
	p++;
	if (*p == '!' || *p == '^')
		negate = 1, p++;
	for (const char *first = p; p < end - 1; p++) {
		if (*p == ']' && p != first)
			break;
		if ((k = class_len(p))) {
			found |= in_class(p, k, c);
			p += k - 1;
			continue;
		}
		unsigned char lo = (unsigned char)(*p == '\\' && p + 1 < end - 1 ? *++p : *p),
			      hi = lo;
		if (p[1] == '-' && p + 2 < end - 1) {
			p += 2;
			hi = (unsigned char)(*p == '\\' && p + 1 < end - 1 ? *++p : *p);
		}
		found |= lo <= c && c <= hi;
	}
	return found != negate;
}

/* Whether the pattern element at p matches c; *next is the element after it. */
static int element_match(const char *p, unsigned char c, const char **next)
{
	const char *end;
	*next = p + 1;
	if (*p == '?')
		return 1;
	if (*p == '[' && (end = bracket_end(p))) {
		*next = end;
		return bracket_match(p, end, c);
	}
	if (*p == '\\' && p[1])
		*next = p + 2, p++;
	return (unsigned char)*p == c;
}

int cp_patch_glob(const char *pattern, const char *s)
{
	const char *star = NULL, *resume = NULL, *next;
	for (;;) {
		if (*pattern == '*') {
			while (*pattern == '*')
				pattern++;
			if (!*pattern)
				return 1;
			star = pattern, resume = s;
			continue;
		}
		if (!*s)
			return !*pattern;
		if (*pattern && element_match(pattern, (unsigned char)*s, &next)) {
			pattern = next, s++;
			continue;
		}
		if (!star)
			return 0;
		pattern = star, s = ++resume; /* let the last '*' take one more byte */
	}
}
