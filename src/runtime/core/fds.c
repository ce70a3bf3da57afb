/* Owned-descriptor bitmap (see fds.h). */
#include "runtime/core/fds.h"

#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/sigsafe/banned.h"

static uint64_t owned[CP_FDS_MAX / 64];

void cp_fd_own(int fd)
{
	if (fd >= 0 && fd < CP_FDS_MAX)
		__atomic_or_fetch(&owned[fd / 64], 1ull << (fd % 64), __ATOMIC_RELEASE);
}

void cp_fd_disown(int fd)
{
	if (fd >= 0 && fd < CP_FDS_MAX)
		__atomic_and_fetch(&owned[fd / 64], ~(1ull << (fd % 64)), __ATOMIC_RELEASE);
}

int cp_fd_is_owned(int fd)
{
	return fd >= 0 && fd < CP_FDS_MAX &&
	       (__atomic_load_n(&owned[fd / 64], __ATOMIC_ACQUIRE) >> (fd % 64)) & 1;
}

int cp_fd_close(int fd)
{
	cp_fd_disown(fd);
	return (int)syscall(SYS_close, fd);
}
