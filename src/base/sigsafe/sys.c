/* Raw system calls for signal context: they bypass interposed libc wrappers and never
 * touch stdio. errno is saved and restored so a handler leaves the program's errno intact. */
#include "base/sigsafe/sigsafe.h"

#include <errno.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "base/sigsafe/banned.h"

ssize_t cp_ss_write_all(int fd, const void *buf, size_t n)
{
	int saved = errno;
	const char *p = buf;
	size_t done = 0;
	while (done < n) {
		long r = syscall(SYS_write, fd, p + done, n - done);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		done += (size_t)r;
	}
	errno = saved;
	return (ssize_t)done;
}

void cp_ss_log(const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	size_t n = cp_ss_vformat(msg, sizeof msg - 1, fmt, ap);
	va_end(ap);
	msg[n++] = '\n';
	cp_ss_write_all(2, msg, n);
}

uint64_t cp_ss_now_ns(int clock_id)
{
	struct timespec ts;
	if (clock_gettime(clock_id, &ts))
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

pid_t cp_ss_gettid(void)
{
	return (pid_t)syscall(SYS_gettid);
}

pid_t cp_ss_getpid(void)
{
	return (pid_t)syscall(SYS_getpid);
}
