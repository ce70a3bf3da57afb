/* Probe patterns against symbol names, mangled and demangled (select.h). */
#include "patch/select.h"

#include <libiberty/demangle.h>
#include <string.h>

struct sink {
	char *buf;
	size_t len, cap;
	int overflow;
};

static void sink_put(const char *s, size_t n, void *opaque)
{
	struct sink *k = opaque;
	if (k->overflow || n >= k->cap - k->len) {
		k->overflow = 1;
		return;
	}
	memcpy(k->buf + k->len, s, n);
	k->len += n;
}

static int demangle_into(const char *symbol, int options, char *buf, size_t cap)
{
	struct sink k = {buf, 0, cap, 0};
	if (!cplus_demangle_v3_callback(symbol, options, sink_put, &k) || k.overflow)
		return -1;
	buf[k.len] = 0;
	return 0;
}

void cp_patch_name_init(struct cp_patch_name *n, const char *symbol)
{
	n->symbol = symbol;
	n->state = 0;
}

static int name_demangle(struct cp_patch_name *n)
{
	if (n->state)
		return n->state;
	n->state = -1;
	if (strncmp(n->symbol, "_Z", 2) || strlen(n->symbol) > CP_PATCH_MANGLED_MAX)
		return -1;
	if (demangle_into(n->symbol, DMGL_PARAMS | DMGL_ANSI, n->full, sizeof n->full) ||
	    demangle_into(n->symbol, DMGL_PARAMS | DMGL_ANSI | DMGL_RET_DROP, n->noret,
			  sizeof n->noret) ||
	    demangle_into(n->symbol, DMGL_ANSI, n->bare, sizeof n->bare))
		return -1;
	n->state = 1;
	return 1;
}

const char *cp_patch_name_demangled(struct cp_patch_name *n)
{
	return name_demangle(n) == 1 ? n->full : NULL;
}

static int is_ident(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_';
}

/* Words a mangled name abbreviates (St, Sa, Sb, Ss, Si, So, Sd) or encodes (operators). */
static int abbreviated(const char *run, size_t len)
{
	static const char *const words[] = {"std",    "operator", "allocator", "basic_string",
					    "string", "istream",  "ostream",   "iostream"};
	for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
		for (const char *w = words[i]; strlen(w) >= len; w++)
			if (!strncmp(w, run, len))
				return 1;
	return 0;
}

/* Whether the len characters at run occur in symbol. */
static int has_run(const char *symbol, const char *run, size_t len)
{
	char buf[256];
	if (len >= sizeof buf)
		return 1;
	memcpy(buf, run, len);
	buf[len] = 0;
	return strstr(symbol, buf) != NULL;
}

/* False only when the symbol cannot demangle to a name glob matches: every identifier glob
 * spells out in the qualified name (outside <>, (), {}, [], after a return type and
 * before the parameter list or an operator) is written verbatim in the mangled name
 * (<length><identifier>). Saves demangling most symbols of a large library for a pattern
 * such as `ns::Klass::*`. */
static int may_match_demangled(const char *glob, const char *symbol)
{
	const char *run[16];
	size_t len[16], nrun = 0;
	int depth = 0;
	if (strchr(glob, '\\'))
		return 1;
	for (const char *p = glob; *p && !(*p == '(' && !depth);) {
		if (strchr("<{[(", *p)) {
			depth++, p++;
		} else if (strchr(">)}]", *p)) {
			depth -= depth > 0, p++;
		} else if (*p == ' ' && !depth) {
			nrun = 0, p++; /* what came before is a return type */
		} else if (!is_ident(*p) || depth) {
			p++;
		} else {
			size_t n = 0;
			while (is_ident(p[n]))
				n++;
			if (n >= 8 && !strncmp(p + n - 8, "operator", 8))
				break; /* the operator's name is encoded */
			if (abbreviated(p, n))
				return 1;
			if (nrun < 16)
				run[nrun] = p, len[nrun++] = n;
			p += n;
		}
	}
	for (size_t i = 0; i < nrun; i++)
		if (!has_run(symbol, run[i], len[i]))
			return 0;
	return 1;
}

/* GCC's clone suffixes: .constprop.N, .isra.N, .part.N, chained (.isra.0.constprop.0). */
size_t cp_patch_clone_base_len(const char *symbol)
{
	static const char *const kinds[] = {"constprop.", "isra.", "part."};
	const char *dot = strchr(symbol, '.');
	if (!dot || dot == symbol)
		return 0;
	for (const char *p = dot; *p;) {
		size_t k = 0, n = 0;
		while (k < 3 && strncmp(p + 1, kinds[k], strlen(kinds[k])))
			k++;
		if (p[0] != '.' || k == 3)
			return 0; /* another suffix (.cold, .lto_priv...): no clone to probe */
		p += 1 + strlen(kinds[k]);
		while (p[n] >= '0' && p[n] <= '9')
			n++;
		if (!n)
			return 0;
		p += n;
	}
	return (size_t)(dot - symbol);
}

static int clone_matches(const char *glob, const char *symbol)
{
	char base[256];
	size_t len = cp_patch_clone_base_len(symbol);
	if (!len || len >= sizeof base)
		return 0;
	memcpy(base, symbol, len);
	base[len] = 0;
	return cp_patch_glob(glob, base);
}

static int glob_matches(const char *glob, struct cp_patch_name *n)
{
	if (cp_patch_glob(glob, n->symbol) || clone_matches(glob, n->symbol))
		return 1;
	if (strncmp(n->symbol, "_Z", 2) || !may_match_demangled(glob, n->symbol) ||
	    name_demangle(n) != 1)
		return 0;
	return cp_patch_glob(glob, n->bare) || cp_patch_glob(glob, n->noret) ||
	       cp_patch_glob(glob, n->full);
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

/* The ':' ending the MODULE part: the first one that is not half of a '::'. */
static const char *module_colon(const char *pattern)
{
	for (const char *p = pattern; (p = strchr(p, ':')); p += 2)
		if (p[1] != ':')
			return p;
	return NULL;
}

/* The role bits of pattern's +/- prefix, *rest the pattern after it and after a MODULE:
 * part; 0 when that MODULE part does not match the module at path. */
static uint32_t pattern_role(const char *pattern, const char *path, const char **rest)
{
	uint32_t role = CP_PATCH_ROLE_MEASURE;
	if (*pattern == '+' || *pattern == '-')
		role |= *pattern++ == '+' ? CP_PATCH_ROLE_SELECT : CP_PATCH_ROLE_FILTER;
	const char *colon = module_colon(pattern);
	if (colon) {
		char mod[256];
		size_t len = (size_t)(colon - pattern);
		if (len >= sizeof mod)
			return 0;
		memcpy(mod, pattern, len);
		mod[len] = 0;
		if (!cp_patch_glob(mod, base_name(path)))
			return 0;
		pattern = colon + 1;
	}
	*rest = pattern;
	return role;
}

uint32_t cp_patch_pattern_match(const char *pattern, const char *path, struct cp_patch_name *n)
{
	uint32_t role = pattern_role(pattern, path, &pattern);
	return role && glob_matches(pattern, n) ? role : 0;
}

uint32_t cp_patch_pattern_unnamed(const char *pattern, const char *path, uint64_t *vaddr,
				  int *qualified)
{
	const char *name;
	uint32_t role = pattern_role(pattern, path, &name);
	size_t ndigits =
	    role && !strncmp(name, "sub_", 4) ? strspn(name + 4, "0123456789abcdef") : 0;
	if (!ndigits || ndigits > 16 || name[4 + ndigits])
		return 0;
	*vaddr = 0;
	for (const char *p = name + 4; *p; p++)
		*vaddr = *vaddr << 4 | (uint64_t)(*p <= '9' ? *p - '0' : *p - 'a' + 10);
	*qualified = module_colon(pattern + (*pattern == '+' || *pattern == '-')) != NULL;
	return role;
}

int cp_patch_module_skipped(const char *path)
{
	const char *b = base_name(path);
	return path[0] == '[' || !path[0] || strstr(b, "libcallpath-rt") ||
	       !strncmp(b, "ld-linux", 8) || !strncmp(b, "libZydis", 8) ||
	       !strncmp(b, "libZycore", 9);
}
