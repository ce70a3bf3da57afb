#include "base/atomic-file.h"

#include "base/error.h"
#include "base/strbuf.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* mkstemp makes the file 0600: give it the mode of the file it replaces, or what the umask
 * allows for a new one. */
static void set_mode(int fd, const char *path)
{
	struct stat old;
	mode_t mode;
	if (!stat(path, &old)) {
		mode = old.st_mode & 07777;
	} else {
		mode_t mask = umask(0);
		umask(mask);
		mode = 0666 & ~mask;
	}
	fchmod(fd, mode);
}

int cp_atomic_begin(struct cp_atomic_file *f, const char *path, int flags)
{
	struct strbuf tmp;
	strbuf_init(&tmp);
	strbuf_addf(&tmp, "%s.tmp.XXXXXX", path);
	memset(f, 0, sizeof *f);
	f->fd = mkstemp(tmp.buf);
	if (f->fd < 0) {
		int rc = cp_error(CP_EIO, "cannot create a temporary file next to %s: %s", path,
				  strerror(errno));
		strbuf_release(&tmp);
		return rc;
	}
	fcntl(f->fd, F_SETFD, FD_CLOEXEC);
	set_mode(f->fd, path);
	f->path = path;
	f->tmp = strbuf_detach(&tmp);
	f->flags = flags;
	return 0;
}

/* The caller closed the file: open it again to sync it. */
static void sync_by_name(const char *tmp)
{
	int fd = open(tmp, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		fsync(fd);
		close(fd);
	}
}

int cp_atomic_commit(struct cp_atomic_file *f, int rc)
{
	if (f->fd >= 0) {
		if (!rc && (f->flags & CP_ATOMIC_SYNC) && fsync(f->fd))
			rc = cp_error(CP_EIO, "writing %s: %s", f->path, strerror(errno));
		if (close(f->fd) && !rc)
			rc = cp_error(CP_EIO, "writing %s: %s", f->path, strerror(errno));
	} else if (!rc && (f->flags & CP_ATOMIC_SYNC)) {
		sync_by_name(f->tmp);
	}
	if (!rc && rename(f->tmp, f->path))
		rc = cp_error(CP_EIO, "cannot rename %s to %s: %s", f->tmp, f->path,
			      strerror(errno));
	if (rc)
		unlink(f->tmp);
	free(f->tmp);
	memset(f, 0, sizeof *f);
	f->fd = -1;
	return rc;
}

int cp_write_file_atomic(const char *path, const void *buf, size_t len, int flags)
{
	struct cp_atomic_file f;
	int rc = cp_atomic_begin(&f, path, flags);
	if (rc)
		return rc;
	for (size_t done = 0; done < len && !rc;) {
		ssize_t w = write(f.fd, (const char *)buf + done, len - done);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			rc = cp_error(CP_EIO, "cannot write %s: %s", path,
				      w < 0 ? strerror(errno) : "no progress");
		else
			done += (size_t)w;
	}
	return cp_atomic_commit(&f, rc);
}
