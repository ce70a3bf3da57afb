/* File-backed arenas (see arena.h). Signal-time code: raw system calls only. */
#include "runtime/cct/arena.h"
#include "runtime/core/fds.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/sigsafe/banned.h"

/* Our descriptors live above this number, out of the way of programs that assume small
 * fds are theirs (and of dup2(x, 3)-style code). */
#define CP_ARENA_FD_FLOOR 800
#define CP_ARENA_PAGE 4096ul

static size_t round_up(size_t n, size_t to)
{
	return (n + to - 1) / to * to;
}

static int move_fd_high(int fd)
{
	int hi = fcntl(fd, F_DUPFD_CLOEXEC, CP_ARENA_FD_FLOOR);
	if (hi < 0) {
		cp_fd_own(fd); /* keep the low one rather than fail */
		return fd;
	}
	cp_fd_close(fd);
	cp_fd_own(hi);
	return hi;
}

static int grow_file(int fd, size_t size)
{
	/* fallocate reserves the blocks now, so a full disk fails here instead of raising
	 * SIGBUS on a later store into the mapping; ftruncate where it is not supported. */
	if (syscall(SYS_fallocate, fd, 0, (off_t)0, (off_t)size) == 0)
		return 0;
	if (errno == ENOSPC)
		return -ENOSPC;
	return ftruncate(fd, (off_t)size) ? -errno : 0;
}

int cp_arena_create(struct cp_arena *a, const char *path, size_t reserve, size_t initial)
{
	struct stat st;
	a->base = NULL;
	a->mapped = 0;
	a->reserved = round_up(reserve, CP_ARENA_PAGE);
	size_t plen = 0;
	while (path[plen] && plen + 1 < sizeof a->path) {
		a->path[plen] = path[plen];
		plen++;
	}
	a->path[plen] = 0;
	a->fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (a->fd < 0)
		return -errno;
	a->fd = move_fd_high(a->fd);
	if (fstat(a->fd, &st))
		goto fail;
	a->dev = st.st_dev;
	a->ino = st.st_ino;
	void *p =
	    mmap(NULL, a->reserved, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		goto fail;
	a->base = p;
	int rc = cp_arena_ensure(a, initial);
	if (rc) {
		cp_arena_release(a, 0);
		unlink(path);
		return rc;
	}
	return 0;
fail:;
	int err = errno;
	cp_fd_close(a->fd);
	unlink(path);
	a->fd = -1;
	return -err;
}

/* Our descriptor still names our file? If the program closed (or reused) it, reopen the
 * file by path, provided it is still the same file. */
static int arena_fd_is_ours(const struct cp_arena *a);

static int arena_check_fd(struct cp_arena *a)
{
	struct stat st;
	if (arena_fd_is_ours(a))
		return 0;
	cp_fd_disown(a->fd); /* that number is the program's now */
	int fd = open(a->path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -EBADF;
	if (fstat(fd, &st) || st.st_dev != a->dev || st.st_ino != a->ino) {
		cp_fd_close(fd);
		return -EBADF;
	}
	a->fd = move_fd_high(fd);
	return 0;
}

int cp_arena_ensure(struct cp_arena *a, size_t need)
{
	if (need <= a->mapped)
		return 0;
	if (need > a->reserved)
		return -ENOSPC;
	/* Doubling from one page keeps the files of short processes and threads small; the
	 * step is capped so that a large tree does not reserve much more disk than it uses. */
	size_t step = a->mapped < CP_ARENA_PAGE ? CP_ARENA_PAGE : a->mapped;
	if (step > (16ul << 20))
		step = 16ul << 20;
	size_t size = round_up(need > a->mapped + step ? need : a->mapped + step, CP_ARENA_PAGE);
	if (size > a->reserved)
		size = a->reserved;
	if (arena_check_fd(a))
		return -EBADF;
	int rc = grow_file(a->fd, size);
	if (rc)
		return rc;
	void *p = mmap(a->base, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, a->fd, 0);
	if (p == MAP_FAILED)
		return -errno;
	a->mapped = size;
	return 0;
}

/* Is our descriptor still our file? (Never close or truncate a descriptor the program
 * reused after closing ours.) */
static int arena_fd_is_ours(const struct cp_arena *a)
{
	struct stat st;
	return a->fd >= 0 && !fstat(a->fd, &st) && st.st_dev == a->dev && st.st_ino == a->ino;
}

void cp_arena_release(struct cp_arena *a, size_t keep)
{
	if (a->base)
		munmap(a->base, a->reserved);
	if (arena_fd_is_ours(a)) {
		if (keep)
			(void)!ftruncate(a->fd, (off_t)keep);
		cp_fd_close(a->fd);
	}
	a->base = NULL;
	a->fd = -1;
	a->mapped = 0;
}

void cp_arena_trim(struct cp_arena *a, size_t keep)
{
	if (keep >= a->mapped || !arena_fd_is_ours(a) || ftruncate(a->fd, (off_t)keep))
		return;
	/* Pages past the new end are gone: the next cp_arena_ensure grows and maps again. */
	a->mapped = keep;
}

int cp_arena_relink(struct cp_arena *a)
{
	struct stat st;
	int fd = open(a->path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	fd = move_fd_high(fd);
	for (size_t off = 0; off < a->mapped;) {
		ssize_t n = write(fd, a->base + off, a->mapped - off);
		if (n <= 0)
			goto fail;
		off += (size_t)n;
	}
	if (fstat(fd, &st) || mmap(a->base, a->mapped, PROT_READ | PROT_WRITE,
				   MAP_SHARED | MAP_FIXED, fd, 0) == MAP_FAILED)
		goto fail;
	if (arena_fd_is_ours(a))
		cp_fd_close(a->fd);
	a->fd = fd;
	a->dev = st.st_dev;
	a->ino = st.st_ino;
	return 0;
fail:;
	int err = errno ? errno : EIO;
	cp_fd_close(fd);
	unlink(a->path);
	return -err;
}

void cp_arena_abandon(struct cp_arena *a)
{
	if (a->base)
		munmap(a->base, a->reserved);
	if (arena_fd_is_ours(a))
		cp_fd_close(a->fd);
	a->base = NULL;
	a->fd = -1;
	a->mapped = 0;
}
