/* close, close_range and closefrom skip the runtime's own descriptors (core/fds.h): the
 * program is told they were closed; they stay ours. dup2/dup3 onto one of them is not
 * intercepted (rare); the arena then reopens its file by path. */
#include "runtime/core/fds.h"
#include "runtime/core/runtime.h"
#include "runtime/interpose/real.h"

#include <errno.h>
#include <sys/syscall.h>
#include <unistd.h>

CP_EXPORT int close(int fd)
{
	if (cp_fd_is_owned(fd))
		return 0;
	return CP_REAL(close)(fd);
}

/* Applies close_range to [first, last] minus our descriptors. */
static int close_range_split(unsigned first, unsigned last, int flags)
{
	unsigned lo = first;
	for (unsigned fd = first; fd <= last && fd < CP_FDS_MAX; fd++) {
		if (!cp_fd_is_owned((int)fd))
			continue;
		if (fd > lo && syscall(SYS_close_range, lo, fd - 1, flags))
			return -1;
		lo = fd + 1;
	}
	if (lo <= last && lo >= first)
		return (int)syscall(SYS_close_range, lo, last, flags);
	return 0;
}

CP_EXPORT int close_range(unsigned first, unsigned last, int flags)
{
	if (!cp_rt.active || first > last)
		return CP_REAL(close_range)(first, last, flags);
	return close_range_split(first, last, flags);
}

CP_EXPORT void closefrom(int lowfd)
{
	if (!cp_rt.active || lowfd < 0) {
		CP_REAL(closefrom)(lowfd);
		return;
	}
	if (close_range_split((unsigned)lowfd, ~0u, 0))
		CP_REAL(closefrom)(lowfd); /* no close_range in this kernel: glibc's fallback */
}
