/* Replacing a file so that readers see the old contents or the whole new ones, never a part
 * (a report reading a database while analyze rewrites it; an interrupted export).
 *
 * The data goes to a temporary file next to the target (same directory: rename is atomic
 * there), which is renamed over the target on success and removed on failure. The new file
 * gets the mode of the file it replaces, else 0666 less the umask.
 *
 * One buffer: cp_write_file_atomic(). Streaming writers and libraries that open files by
 * name (SQLite): cp_atomic_begin(), write to f.fd (or f.tmp by name, after closing f.fd and
 * setting it to -1), then cp_atomic_commit(). */
#ifndef CP_BASE_ATOMIC_FILE_H
#define CP_BASE_ATOMIC_FILE_H

#include <stddef.h>

/* fsync the new contents before the rename (a crash leaves the old file or the new one) */
#define CP_ATOMIC_SYNC 1

struct cp_atomic_file {
	const char *path; /* the target */
	char *tmp;	  /* the temporary file */
	int fd;		  /* open on tmp for writing; -1 once the caller closed it */
	int flags;
};

/* Creates the temporary file; on failure nothing is left to commit. */
int cp_atomic_begin(struct cp_atomic_file *f, const char *path, int flags);
/* rc is the caller's result so far: 0 puts the new file in place, anything else removes it.
 * Returns rc, or the error of closing, syncing or renaming. Always releases f. */
int cp_atomic_commit(struct cp_atomic_file *f, int rc);
/* Writes len bytes of buf as path's new contents. */
int cp_write_file_atomic(const char *path, const void *buf, size_t len, int flags);

#endif
