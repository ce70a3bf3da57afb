/* I/O triggers (-e io): read, write, pread, pwrite (and their 64 names), readv, writev,
 * __read_chk (what read becomes under _FORTIFY_SOURCE), fread and fwrite.
 *
 * Metrics, by the calling context of the call: io-read-bytes, io-write-bytes (bytes the
 * call transferred), io-time (ns spent in the call, blocked or copying), io-calls.
 *
 * What is seen: calls the program (or a library through the PLT) makes to these names.
 * glibc's stdio calls its internal __read/__write, which cannot be interposed, so fread
 * and fwrite are wrapped themselves: their bytes are the bytes handed to or taken from
 * the stdio buffer (items x size returned), their time includes the system calls that
 * filled or flushed it. Other stdio functions (fgets, getc, fprintf, puts, fflush,
 * fclose's flush) and the *_unlocked variants are not seen, nor system calls made
 * directly (syscall(2), io_uring), nor send/recv, sendfile, splice, mmap'd files. */
#include "runtime/core/runtime.h"
#include "runtime/core/sync.h"
#include "runtime/interpose/real.h"

#include <errno.h>
#include <stdio.h>
#include <sys/uio.h>
#include <unistd.h>

const int cp_sync_linked_io = 1; /* this library interposes -e io (core/sync.h) */

static const enum cp_sync_id read_ids[3] = {CP_SM_IO_READ_BYTES, CP_SM_IO_TIME, CP_SM_IO_CALLS};
static const enum cp_sync_id write_ids[3] = {CP_SM_IO_WRITE_BYTES, CP_SM_IO_TIME, CP_SM_IO_CALLS};

/* A call that started at t0 and moved `bytes` (negative: failed, nothing moved). */
static inline __attribute__((always_inline)) void
io_record(const void *ra, const void *cfa, const void *fp, uint64_t t0, int64_t bytes, int is_write)
{
	int saved = errno;
	uint64_t values[3] = {bytes > 0 ? (uint64_t)bytes : 0, cp_sync_now_ns() - t0, 1};
	cp_sync_record_ids(ra, cfa, fp, is_write ? write_ids : read_ids, values, 3, NULL);
	errno = saved;
}

#define IO_ON() CP_SYNC_ENABLED(CP_SYNC_IO)

/* The body of every wrapper: call, and if on, time and record. */
#define IO_CALL(fn, is_write, bytes_of, ...)                                                       \
	do {                                                                                       \
		__typeof__(cp_real.fn) real_fn = CP_REAL(fn);                                      \
		if (!IO_ON())                                                                      \
			return real_fn(__VA_ARGS__);                                               \
		uint64_t t0 = cp_sync_now_ns();                                                    \
		__typeof__(real_fn(__VA_ARGS__)) rc = real_fn(__VA_ARGS__);                        \
		io_record(CP_SYNC_SITE(), t0, (int64_t)(bytes_of), is_write);                      \
		return rc;                                                                         \
	} while (0)

CP_EXPORT ssize_t read(int fd, void *buf, size_t n)
{
	IO_CALL(read, 0, rc, fd, buf, n);
}

CP_EXPORT ssize_t write(int fd, const void *buf, size_t n)
{
	IO_CALL(write, 1, rc, fd, buf, n);
}

CP_EXPORT ssize_t pread(int fd, void *buf, size_t n, off_t off)
{
	IO_CALL(pread, 0, rc, fd, buf, n, off);
}

CP_EXPORT ssize_t pwrite(int fd, const void *buf, size_t n, off_t off)
{
	IO_CALL(pwrite, 1, rc, fd, buf, n, off);
}

CP_EXPORT ssize_t pread64(int fd, void *buf, size_t n, off_t off)
{
	IO_CALL(pread64, 0, rc, fd, buf, n, off);
}

CP_EXPORT ssize_t pwrite64(int fd, const void *buf, size_t n, off_t off)
{
	IO_CALL(pwrite64, 1, rc, fd, buf, n, off);
}

CP_EXPORT ssize_t readv(int fd, const struct iovec *iov, int cnt)
{
	IO_CALL(readv, 0, rc, fd, iov, cnt);
}

CP_EXPORT ssize_t writev(int fd, const struct iovec *iov, int cnt)
{
	IO_CALL(writev, 1, rc, fd, iov, cnt);
}

CP_EXPORT ssize_t __read_chk(int fd, void *buf, size_t n, size_t buflen)
{
	IO_CALL(__read_chk, 0, rc, fd, buf, n, buflen);
}

CP_EXPORT size_t fread(void *buf, size_t size, size_t n, FILE *f)
{
	IO_CALL(fread, 0, rc * size, buf, size, n, f);
}

CP_EXPORT size_t fwrite(const void *buf, size_t size, size_t n, FILE *f)
{
	IO_CALL(fwrite, 1, rc * size, buf, size, n, f);
}
