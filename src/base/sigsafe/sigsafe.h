/* The async-signal-safe subset of base: what a signal handler may call.
 *
 * No malloc, no stdio, no locks, no errno-dependent libc helpers. Everything here either
 * works on caller-provided fixed buffers or is a raw system call. Files that run in signal
 * context include "base/sigsafe/banned.h" after their other headers. */
#ifndef CP_BASE_SIGSAFE_H
#define CP_BASE_SIGSAFE_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* A fixed-size output buffer; formatting never overflows it, it truncates and remembers. */
struct cp_ss_buf {
	char *p;
	size_t cap; /* bytes available including the terminating NUL */
	size_t len; /* bytes written so far (excluding NUL) */
	int truncated;
};

void cp_ss_buf_init(struct cp_ss_buf *b, char *mem, size_t cap);
void cp_ss_buf_putc(struct cp_ss_buf *b, char c);
void cp_ss_buf_puts(struct cp_ss_buf *b, const char *s);
void cp_ss_buf_putu(struct cp_ss_buf *b, uint64_t v, unsigned base, unsigned min_width);
void cp_ss_buf_puti(struct cp_ss_buf *b, int64_t v);

/* printf-like subset: %s %c %d %i %u %x %p %%, with the l/ll/z length modifiers and a
 * minimum width for numbers (space-padded, or zero-padded when written %0N). Returns the length
 * written; always NUL-terminates (when cap > 0). */
size_t cp_ss_format(char *out, size_t cap, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
size_t cp_ss_vformat(char *out, size_t cap, const char *fmt, va_list ap);

size_t cp_ss_strlen(const char *s);
int cp_ss_strcmp(const char *a, const char *b);
int cp_ss_strncmp(const char *a, const char *b, size_t n);
/* Copies at most cap-1 bytes and NUL-terminates; returns strlen(src). */
size_t cp_ss_strlcpy(char *dst, const char *src, size_t cap);
void *cp_ss_memcpy(void *dst, const void *src, size_t n);
void *cp_ss_memset(void *dst, int c, size_t n);
/* Parses a decimal unsigned integer with an optional unit suffix of time (ns, us, ms, s)
 * or a plain count; *end is set past what was consumed. Returns -1 on no digits/overflow. */
int cp_ss_parse_u64(const char *s, uint64_t *out, const char **end);

/* Raw system calls that bypass every interposition (and errno where noted). */
ssize_t cp_ss_write_all(int fd, const void *buf, size_t n);
/* Writes a formatted message to stderr (fd 2) in one write. */
void cp_ss_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
uint64_t cp_ss_now_ns(int clock_id);
pid_t cp_ss_gettid(void);
pid_t cp_ss_getpid(void);

#endif
