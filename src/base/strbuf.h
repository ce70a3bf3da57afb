/* Growable NUL-terminated string buffer (git's strbuf). Offline tools only. */
#ifndef CP_BASE_STRBUF_H
#define CP_BASE_STRBUF_H

#include <stddef.h>

struct strbuf {
	char *buf; /* always NUL-terminated once anything was added; "" after init */
	size_t len;
	size_t alloc;
};

void strbuf_init(struct strbuf *sb);
void strbuf_release(struct strbuf *sb);
void strbuf_clear(struct strbuf *sb);
void strbuf_add(struct strbuf *sb, const void *data, size_t len);
void strbuf_addstr(struct strbuf *sb, const char *s);
void strbuf_addch(struct strbuf *sb, char c);
void strbuf_addf(struct strbuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Appends s escaped for a JSON string body (without the quotes). */
void strbuf_add_json(struct strbuf *sb, const char *s);
/* Detaches the buffer; the caller frees it. */
char *strbuf_detach(struct strbuf *sb);

/* The value of hexadecimal digit c, -1 if c is none. */
static inline int cp_hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

#endif
