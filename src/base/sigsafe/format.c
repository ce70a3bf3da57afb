/* Fixed-buffer formatting for signal handlers (no malloc, no locale, no stdio). */
#include "base/sigsafe/sigsafe.h"

#include "base/sigsafe/banned.h"

void cp_ss_buf_init(struct cp_ss_buf *b, char *mem, size_t cap)
{
	b->p = mem;
	b->cap = cap;
	b->len = 0;
	b->truncated = 0;
	if (cap)
		mem[0] = 0;
}

void cp_ss_buf_putc(struct cp_ss_buf *b, char c)
{
	if (b->len + 1 >= b->cap) {
		b->truncated = 1;
		return;
	}
	b->p[b->len++] = c;
	b->p[b->len] = 0;
}

void cp_ss_buf_puts(struct cp_ss_buf *b, const char *s)
{
	if (!s)
		s = "(null)";
	while (*s)
		cp_ss_buf_putc(b, *s++);
}

void cp_ss_buf_putu(struct cp_ss_buf *b, uint64_t v, unsigned base, unsigned min_width)
{
	char digits[64];
	unsigned n = 0;
	if (base < 2 || base > 16)
		base = 10;
	do {
		digits[n++] = "0123456789abcdef"[v % base];
		v /= base;
	} while (v && n < sizeof digits);
	while (n < min_width && n < sizeof digits)
		digits[n++] = '0';
	while (n)
		cp_ss_buf_putc(b, digits[--n]);
}

void cp_ss_buf_puti(struct cp_ss_buf *b, int64_t v)
{
	if (v < 0) {
		cp_ss_buf_putc(b, '-');
		cp_ss_buf_putu(b, (uint64_t)0 - (uint64_t)v, 10, 0);
	} else {
		cp_ss_buf_putu(b, (uint64_t)v, 10, 0);
	}
}

/* Emits a converted number with printf's width rules: zero padding goes after the sign,
 * space padding before it. */
static void put_padded(struct cp_ss_buf *b, const char *num, unsigned width, int zero)
{
	size_t len = cp_ss_strlen(num);
	int neg = num[0] == '-';
	if (neg && zero)
		cp_ss_buf_putc(b, *num++);
	for (; len < width; len++)
		cp_ss_buf_putc(b, zero ? '0' : ' ');
	cp_ss_buf_puts(b, num);
}

/* Reads one conversion (after '%') and emits its argument; returns what follows it. */
static const char *format_conv(struct cp_ss_buf *b, const char *f, va_list *ap)
{
	unsigned width = 0;
	int longs = 0, size_t_arg = 0, zero = 0;
	char tmp[32];
	struct cp_ss_buf nb;
	cp_ss_buf_init(&nb, tmp, sizeof tmp);
	if (*f == '0') {
		zero = 1;
		f++;
	}
	while (*f >= '0' && *f <= '9')
		width = width * 10 + (unsigned)(*f++ - '0');
	for (; *f == 'l'; f++)
		longs++;
	if (*f == 'z') {
		size_t_arg = 1;
		f++;
	}
	switch (*f) {
	case 'd':
	case 'i':
		cp_ss_buf_puti(&nb, size_t_arg ? (int64_t)va_arg(*ap, ssize_t)
				    : longs    ? (int64_t)va_arg(*ap, long)
					       : (int64_t)va_arg(*ap, int));
		put_padded(b, tmp, width, zero);
		break;
	case 'u':
	case 'x':
		cp_ss_buf_putu(&nb,
			       size_t_arg ? (uint64_t)va_arg(*ap, size_t)
			       : longs	  ? (uint64_t)va_arg(*ap, unsigned long)
					  : (uint64_t)va_arg(*ap, unsigned),
			       *f == 'x' ? 16 : 10, 0);
		put_padded(b, tmp, width, zero);
		break;
	case 'p':
		cp_ss_buf_puts(b, "0x");
		cp_ss_buf_putu(b, (uint64_t)(uintptr_t)va_arg(*ap, void *), 16, 0);
		break;
	case 's':
		cp_ss_buf_puts(b, va_arg(*ap, const char *));
		break;
	case 'c':
		cp_ss_buf_putc(b, (char)va_arg(*ap, int));
		break;
	case '%':
		cp_ss_buf_putc(b, '%');
		break;
	default: /* unknown conversion: show it verbatim, consume nothing */
		cp_ss_buf_putc(b, '%');
		if (!*f)
			return f;
		cp_ss_buf_putc(b, *f);
	}
	return f + 1;
}

size_t cp_ss_vformat(char *out, size_t cap, const char *fmt, va_list ap)
{
	struct cp_ss_buf b;
	va_list copy;
	cp_ss_buf_init(&b, out, cap);
	va_copy(copy, ap);
	for (const char *f = fmt; *f;) {
		if (*f != '%') {
			cp_ss_buf_putc(&b, *f++);
			continue;
		}
		f = format_conv(&b, f + 1, &copy);
	}
	va_end(copy);
	return b.len;
}

size_t cp_ss_format(char *out, size_t cap, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	size_t n = cp_ss_vformat(out, cap, fmt, ap);
	va_end(ap);
	return n;
}
