#include "base/strbuf.h"
#include "base/xalloc.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static char empty_string[1];

void strbuf_init(struct strbuf *sb)
{
	sb->buf = empty_string;
	sb->len = 0;
	sb->alloc = 0;
}

void strbuf_release(struct strbuf *sb)
{
	if (sb->alloc)
		free(sb->buf);
	strbuf_init(sb);
}

void strbuf_clear(struct strbuf *sb)
{
	sb->len = 0;
	if (sb->alloc)
		sb->buf[0] = 0;
}

static void strbuf_grow(struct strbuf *sb, size_t extra)
{
	size_t need = sb->len + extra + 1;
	if (need <= sb->alloc)
		return;
	size_t alloc = sb->alloc ? sb->alloc : 64;
	while (alloc < need)
		alloc *= 2;
	if (sb->alloc) {
		sb->buf = xrealloc(sb->buf, alloc);
	} else {
		sb->buf = xmalloc(alloc);
		sb->buf[0] = 0;
	}
	sb->alloc = alloc;
}

void strbuf_add(struct strbuf *sb, const void *data, size_t len)
{
	strbuf_grow(sb, len);
	if (len) /* data may be NULL then (an empty array) */
		memcpy(sb->buf + sb->len, data, len);
	sb->len += len;
	sb->buf[sb->len] = 0;
}

void strbuf_addstr(struct strbuf *sb, const char *s)
{
	strbuf_add(sb, s, strlen(s));
}

void strbuf_addch(struct strbuf *sb, char c)
{
	strbuf_add(sb, &c, 1);
}

void strbuf_addf(struct strbuf *sb, const char *fmt, ...)
{
	char small[256];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(small, sizeof small, fmt, ap);
	va_end(ap);
	if (n <= 0)
		return;
	if ((size_t)n < sizeof small) {
		strbuf_add(sb, small, (size_t)n);
		return;
	}
	strbuf_grow(sb, (size_t)n);
	va_start(ap, fmt);
	vsnprintf(sb->buf + sb->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	sb->len += (size_t)n;
}

void strbuf_add_json(struct strbuf *sb, const char *s)
{
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;
		switch (c) {
		case '"':
			strbuf_addstr(sb, "\\\"");
			break;
		case '\\':
			strbuf_addstr(sb, "\\\\");
			break;
		case '\n':
			strbuf_addstr(sb, "\\n");
			break;
		case '\t':
			strbuf_addstr(sb, "\\t");
			break;
		case '\r':
			strbuf_addstr(sb, "\\r");
			break;
		default:
			if (c < 0x20)
				strbuf_addf(sb, "\\u%04x", c);
			else
				strbuf_addch(sb, (char)c);
		}
	}
}

char *strbuf_detach(struct strbuf *sb)
{
	char *r = sb->alloc ? sb->buf : xstrdup("");
	strbuf_init(sb);
	return r;
}
