/* What a profile database was made from (db.h, struct cp_db_source): stamps of the
 * measurement files when analyze listed them, and the check that a saved database is still
 * current. A copy of a directory (cp -r gives new mtimes), a file that grew (its header's
 * `used` changes even when an mmap write leaves the mtime alone) or was damaged, replaced,
 * added or removed makes the database stale, whatever the clocks say. */
#include "db/sources.h"

#include "base/error.h"
#include "format/measure-read.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static uint64_t fnv1a64(const unsigned char *p, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;
	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 0x100000001b3ull;
	return h;
}

int cp_db_source_stamp(int dirfd, const char *name, struct cp_db_source *s)
{
	memset(s, 0, sizeof *s);
	s->name = name;
	int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	struct stat st;
	unsigned char head[CP_DB_SOURCE_HEAD];
	ssize_t n = -1;
	if (!fstat(fd, &st))
		n = pread(fd, head, sizeof head, 0);
	close(fd);
	if (n < 0)
		return -1;
	s->size = (uint64_t)st.st_size;
	s->mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
	s->head_hash = fnv1a64(head, (size_t)n);
	return 0;
}

/* Calls fn(ctx, name) for every file of the listing, process files and thread files. */
static void each_file(const struct cp_mf_list *l, void (*fn)(void *, const char *), void *ctx)
{
	for (size_t i = 0; i < l->nimages; i++) {
		const struct cp_mf_list_image *im = &l->images[i];
		fn(ctx, im->proc_name);
		for (size_t j = 0; j < im->nthreads; j++)
			if (im->thr_names[j])
				fn(ctx, im->thr_names[j]);
	}
}

struct record_ctx {
	struct cp_db *db;
	int dirfd;
};

static void record_one(void *ctx, const char *name)
{
	struct record_ctx *c = ctx;
	struct cp_db_source s;
	if (cp_db_source_stamp(c->dirfd, name, &s))
		s.size = UINT64_MAX; /* unreadable now: never matches a later stamp */
	cp_db_source_add(c->db, &s);
}

void cp_db_sources_record(struct cp_db *db, const struct cp_mf_list *l)
{
	struct record_ctx c = {.db = db,
			       .dirfd = open(l->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)};
	if (c.dirfd < 0)
		return;
	each_file(l, record_one, &c);
	close(c.dirfd);
}

struct check_ctx {
	const struct cp_db *saved; /* run.sources sorted by name (cp_db_read_sources) */
	int dirfd;
	size_t seen;
	int stale;
};

static int cmp_name(const void *key, const void *elem)
{
	return strcmp(key, ((const struct cp_db_source *)elem)->name);
}

static void check_one(void *ctx, const char *name)
{
	struct check_ctx *c = ctx;
	if (c->stale)
		return;
	const struct cp_db_source *old =
	    bsearch(name, c->saved->run.sources, c->saved->run.nsources, sizeof *old, cmp_name);
	struct cp_db_source now;
	c->seen++;
	c->stale = !old || cp_db_source_stamp(c->dirfd, name, &now) || now.size != old->size ||
		   now.mtime_ns != old->mtime_ns || now.head_hash != old->head_hash;
}

int cp_db_sources_current(const char *dir, const char *db_path)
{
	struct cp_db saved;
	if (cp_db_read_sources(&saved, db_path)) {
		cp_error_clear();
		return 0;
	}
	struct cp_mf_list l;
	struct check_ctx c = {.saved = &saved, .stale = 1};
	if (!cp_mf_list_open(&l, dir)) {
		c.dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (c.dirfd >= 0) {
			c.stale = 0;
			each_file(&l, check_one, &c);
			close(c.dirfd);
		}
		cp_mf_list_release(&l);
	} else {
		cp_error_clear();
	}
	int current = !c.stale && c.seen == saved.run.nsources && c.seen > 0;
	cp_db_release(&saved);
	return current;
}
