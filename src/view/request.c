/* Parsing the parameters of API requests (request.h). Everything here is hostile input. */
#include "view/request.h"
#include "base/strbuf.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const stat_names[] = {"sum", "mean", "min", "max", "stddev"};
static const char *const view_names[] = {"td", "bu", "flat"};

void cp_web_req_init(struct cp_web_req *r)
{
	memset(r, 0, sizeof *r);
	r->thread = r->rank = -1;
	r->file = r->proc = CP_WEB_NONE;
	r->min = -1;
}

void cp_web_req_release(struct cp_web_req *r)
{
	for (size_t i = 0; i < r->nstrings; i++)
		free(r->strings[i]);
	r->nstrings = 0;
}

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -1;
}

/* A decimal unsigned integer <= max, digits only. */
static int parse_uint(const char *s, uint64_t max, uint64_t *out)
{
	if (!*s || strlen(s) > 20)
		return -1;
	uint64_t v = 0;
	for (const char *p = s; *p; p++) {
		if (*p < '0' || *p > '9')
			return -1;
		if (v > (max - (uint64_t)(*p - '0')) / 10)
			return -1;
		v = v * 10 + (uint64_t)(*p - '0');
	}
	*out = v;
	return 0;
}

static int parse_double(const char *s, double lo, double hi, double *out)
{
	if (!*s || strlen(s) > 32 || strchr(s, 'x') || strchr(s, 'X'))
		return -1;
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (*end || errno || !isfinite(v) || v < lo || v > hi)
		return -1;
	*out = v;
	return 0;
}

static int pick(const char *s, const char *const *names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(s, names[i]))
			return (int)i;
	return -1;
}

static const char *keep(struct cp_web_req *r, const char *value)
{
	if (r->nstrings >= CP_WEB_MAX_PARAMS)
		return NULL;
	char *c = strdup(value);
	if (c)
		r->strings[r->nstrings++] = c;
	return c;
}

int cp_web_node_parse(const char *s, struct cp_web_node *n)
{
	memset(n, 0, sizeof *n);
	if (*s == 'b' || *s == 'f') {
		n->view = *s == 'b' ? CP_WEB_BU : CP_WEB_FLAT;
		s++;
	}
	char digits[16];
	size_t len = strcspn(s, ".");
	if (len == 0 || len >= sizeof digits)
		return -1;
	memcpy(digits, s, len);
	digits[len] = 0;
	uint64_t v;
	if (parse_uint(digits, UINT32_MAX - 1, &v))
		return -1;
	n->index = (uint32_t)v;
	if (s[len] && n->view == CP_WEB_BU) {
		/* "b123.4": at most 7 digits of level */
		size_t ll = strlen(s + len + 1);
		if (ll == 0 || ll > 7 || parse_uint(s + len + 1, 9999999, &v))
			return -1;
		n->level = (uint32_t)v + 1;
	} else if (s[len] && n->view == CP_WEB_FLAT) {
		const char *t = s + len + 1;
		if (!strcmp(t, "g")) {
			n->level = 1;
			return 0;
		}
		if (strlen(t) != 16 || strspn(t, "0123456789abcdef") != 16)
			return -1;
		n->level = 2;
		n->hash = strtoull(t, NULL, 16);
	} else if (s[len]) {
		if (strcmp(s + len, ".n") || n->view != CP_WEB_TD)
			return -1;
		n->noline = 1;
	}
	return 0;
}

void cp_web_node_format(const struct cp_web_node *n, char *buf, size_t len)
{
	if (n->index == 0 && !n->noline && !n->level)
		snprintf(buf, len, "0");
	else if (n->level && n->view == CP_WEB_FLAT && n->level == 1)
		snprintf(buf, len, "f%u.g", n->index);
	else if (n->level && n->view == CP_WEB_FLAT)
		snprintf(buf, len, "f%u.%016llx", n->index, (unsigned long long)n->hash);
	else if (n->level)
		snprintf(buf, len, "b%u.%u", n->index, n->level - 1);
	else
		snprintf(buf, len, "%s%u%s",
			 n->view == CP_WEB_BU	  ? "b"
			 : n->view == CP_WEB_FLAT ? "f"
						  : "",
			 n->index, n->noline ? ".n" : "");
}

static int set_sort(struct cp_web_req *r, const char *v)
{
	if (!strcmp(v, "name")) {
		r->sort = CP_WEB_SORT_NAME;
		return 0;
	}
	const char *colon = strchr(v, ':');
	char num[16];
	if (!colon || (size_t)(colon - v) >= sizeof num)
		return -1;
	memcpy(num, v, (size_t)(colon - v));
	num[colon - v] = 0;
	uint64_t m;
	if (parse_uint(num, 255, &m))
		return -1;
	r->sort_metric = (uint32_t)m;
	if (!strcmp(colon + 1, "incl"))
		r->sort = CP_WEB_SORT_INCL;
	else if (!strcmp(colon + 1, "excl"))
		r->sort = CP_WEB_SORT_EXCL;
	else
		return -1;
	return 0;
}

/* Parameters taking an unsigned integer: name, maximum, where. */
static int set_uint_param(struct cp_web_req *r, const char *key, const char *value, int *known)
{
	struct {
		const char *name;
		uint64_t max;
		void *dst;
		int size; /* 4 = uint32_t, 8 = size_t, -8 = int64_t */
	} ints[] = {
	    {"thread", UINT32_MAX - 1, &r->thread, -8},
	    {"rank", INT32_MAX, &r->rank, -8},
	    {"metric", 255, &r->metric, 4},
	    {"offset", 100000000, &r->offset, 8},
	    {"limit", 100000, &r->limit, 8},
	    {"file", UINT32_MAX - 1, &r->file, 4},
	    {"proc", UINT32_MAX - 1, &r->proc, 4},
	    {"depth", 10000, &r->depth, 4},
	    {"nodes", 100000, &r->nodes, 4},
	};
	for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++) {
		if (strcmp(key, ints[i].name))
			continue;
		*known = 1;
		uint64_t v;
		if (parse_uint(value, ints[i].max, &v))
			return -1;
		if (ints[i].size == 4)
			*(uint32_t *)ints[i].dst = (uint32_t)v;
		else if (ints[i].size == 8)
			*(size_t *)ints[i].dst = (size_t)v;
		else
			*(int64_t *)ints[i].dst = (int64_t)v;
		return 0;
	}
	return 0;
}

static int set_other(struct cp_web_req *r, const char *key, const char *value)
{
	int k;
	if (!strcmp(key, "view")) {
		if ((k = pick(value, view_names, 3)) < 0)
			return -1;
		r->view = k;
	} else if (!strcmp(key, "stat")) {
		if ((k = pick(value, stat_names, 5)) < 0)
			return -1;
		r->stat = k;
	} else if (!strcmp(key, "node")) {
		if (cp_web_node_parse(value, &r->node))
			return -1;
		r->has_node = 1;
	} else if (!strcmp(key, "sort")) {
		return set_sort(r, value);
	} else if (!strcmp(key, "threshold")) {
		return parse_double(value, 0, 100, &r->threshold);
	} else if (!strcmp(key, "min")) {
		return parse_double(value, 0, 1, &r->min);
	} else if (!strcmp(key, "format")) {
		if (strcmp(value, "svg") && strcmp(value, "dot"))
			return -1;
		r->format_dot = !strcmp(value, "dot");
	} else if (!strcmp(key, "q")) {
		return (r->q = keep(r, value)) ? 0 : -1;
	} else if (!strcmp(key, "token")) {
		return (r->token = keep(r, value)) ? 0 : -1;
	} else if (!strcmp(key, "derived")) {
		if (r->nderived >= CP_WEB_MAX_DERIVED || !strchr(value, '='))
			return -1;
		return (r->derived[r->nderived++] = keep(r, value)) ? 0 : -1;
	} else if (strcmp(key, "_")) { /* "_": a cache-buster the front end may add */
		return -2;
	}
	return 0;
}

int cp_web_req_set(struct cp_web_req *r, const char *key, const char *value, char *err,
		   size_t errlen)
{
	if (!key)
		return fail(err, errlen, "empty parameter name");
	if (!value)
		value = "";
	if (++r->nparams > CP_WEB_MAX_PARAMS)
		return fail(err, errlen, "too many parameters (at most %d)", CP_WEB_MAX_PARAMS);
	if (strlen(value) > CP_WEB_MAX_VALUE || strlen(key) > 32)
		return fail(err, errlen, "parameter too long");
	int known = 0;
	int rc = set_uint_param(r, key, value, &known);
	if (!known)
		rc = set_other(r, key, value);
	if (rc == -2)
		return fail(err, errlen, "unknown parameter '%s'", key);
	if (rc)
		return fail(err, errlen, "bad value for parameter '%s'", key);
	return 0;
}

int cp_web_req_check(const struct cp_web_req *r, char *err, size_t errlen)
{
	if (r->stat != 0 && (r->thread >= 0 || r->rank >= 0))
		return fail(err, errlen, "stat cannot be combined with thread or rank");
	if (r->has_node && r->node.view != r->view &&
	    !(r->node.index == 0 && !r->node.noline && !r->node.level))
		return fail(err, errlen, "node %s%u is not a node of this view",
			    r->node.view == CP_WEB_BU	  ? "b"
			    : r->node.view == CP_WEB_FLAT ? "f"
							  : "",
			    r->node.index);
	return 0;
}

/* Percent-decodes s[0..n) into out (at least n+1 bytes); -1 on a bad escape or a NUL. */
static int decode(const char *s, size_t n, char *out)
{
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (c == '+') {
			c = ' ';
		} else if (c == '%') {
			if (i + 2 >= n)
				return -1;
			int a = cp_hex_digit(s[i + 1]);
			int b = a < 0 ? -1 : cp_hex_digit(s[i + 2]);
			if (b < 0)
				return -1;
			c = (char)(a << 4 | b);
			i += 2;
		}
		if (!c)
			return -1;
		out[k++] = c;
	}
	out[k] = 0;
	return 0;
}

int cp_web_req_parse_query(struct cp_web_req *r, const char *query, char *err, size_t errlen)
{
	if (strlen(query) > CP_WEB_MAX_URL)
		return fail(err, errlen, "query too long");
	char *buf = malloc(strlen(query) + 1), *val = malloc(strlen(query) + 1);
	int rc = buf && val ? 0 : fail(err, errlen, "no memory");
	for (const char *p = query; !rc && *p;) {
		size_t n = strcspn(p, "&");
		const char *eq = memchr(p, '=', n);
		size_t kn = eq ? (size_t)(eq - p) : n;
		if (n &&
		    (decode(p, kn, buf) || decode(eq ? eq + 1 : p + n, eq ? n - kn - 1 : 0, val)))
			rc = fail(err, errlen, "bad percent-encoding");
		else if (n)
			rc = cp_web_req_set(r, buf, val, err, errlen);
		p += n + (p[n] == '&');
	}
	free(buf);
	free(val);
	return rc ? rc : cp_web_req_check(r, err, errlen);
}

int cp_web_cookie_get(const char *header, const char *name, char *out, size_t outlen)
{
	size_t nl = strlen(name);
	for (const char *p = header; p && *p;) {
		while (*p == ' ' || *p == ';')
			p++;
		size_t n = strcspn(p, ";");
		if (n > nl && !strncmp(p, name, nl) && p[nl] == '=') {
			size_t vn = n - nl - 1;
			if (vn >= outlen)
				return -1;
			memcpy(out, p + nl + 1, vn);
			out[vn] = 0;
			return 0;
		}
		p += n;
	}
	return -1;
}

static int host_is(const char *host, size_t hn, const char *name, unsigned port)
{
	char want[300];
	int n = snprintf(want, sizeof want, "%s:%u", name, port);
	return n > 0 && (size_t)n == hn && !strncasecmp(host, want, hn);
}

int cp_web_host_ok(const char *host, const char *bind, unsigned port)
{
	if (!host || strlen(host) > 255)
		return 0;
	if (bind && (!strcmp(bind, "0.0.0.0") || !strcmp(bind, "::") || !strcmp(bind, "[::]")))
		return 1;
	size_t hn = strlen(host);
	static const char *const local[] = {"127.0.0.1", "localhost", "[::1]"};
	for (size_t i = 0; i < 3; i++)
		if (host_is(host, hn, local[i], port))
			return 1;
	if (!bind || strlen(bind) > 250)
		return 0;
	char br[260];
	snprintf(br, sizeof br, "[%s]", bind);
	return host_is(host, hn, bind, port) || (strchr(bind, ':') && host_is(host, hn, br, port));
}

int cp_web_token_eq(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	unsigned char d = la != lb;
	for (size_t i = 0; i < la && i < lb; i++)
		d |= (unsigned char)(a[i] ^ b[i]);
	return d == 0 && la > 0;
}
