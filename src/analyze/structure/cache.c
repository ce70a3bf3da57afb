#include "analyze/structure/cache.h"

#include "analyze/dwarf/dwarf-index.h"

#include "base/atomic-file.h"
#include "base/error.h"
#include "base/hash.h"
#include "base/xalloc.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void cp_struct_cache_dir(struct strbuf *sb)
{
	const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	strbuf_clear(sb);
	if (xdg && *xdg)
		strbuf_addf(sb, "%s/callpath/struct", xdg);
	else if (home && *home)
		strbuf_addf(sb, "%s/.cache/callpath/struct", home);
}

static int mkdir_p(char *path)
{
	for (char *p = path + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		int r = mkdir(path, 0755);
		*p = '/';
		if (r && errno != EEXIST)
			return -1;
	}
	return mkdir(path, 0755) && errno != EEXIST ? -1 : 0;
}

/* Cache file name for the image; fills size/mtime. */
static void cache_key(const struct cp_elf_image *im, const struct stat *st, struct strbuf *sb)
{
	if (im->build_id_len) {
		char hex[2 * CP_BUILD_ID_MAX + 1];
		cp_build_id_hex(im->build_id, im->build_id_len, hex);
		/* A separate debug file installed after a first analysis (a -dbg or -dbgsym
		 * package) must not be hidden by the entry made without it: one key each. */
		char dbg[2 * CP_BUILD_ID_MAX + PATH_MAX];
		int separate = cp_dwarf_separate_path(im, dbg, sizeof dbg) && !access(dbg, R_OK);
		/* Neither must a stripped copy's (sub_HEX names) hide the symbols of the file
		 * it was stripped from: strip keeps the build-id. */
		GElf_Shdr sh;
		const char *kind = "";
		if (separate)
			kind = ".dbg";
		else if (!cp_elf_find_section(im, ".symtab", &sh))
			kind = ".nosym";
		strbuf_addf(sb, "/%s%s.v%d.cpst", hex, kind, CP_ST_VERSION_MAJOR);
		return;
	}
	char real[PATH_MAX];
	const char *p = realpath(im->path, real) ? real : im->path;
	uint64_t h = cp_fnv1a(CP_ST_CHECKSUM_SEED, p, strlen(p)); /* names stay as they were */
	h = cp_fnv1a(h, &st->st_size, sizeof(st->st_size));
	h = cp_fnv1a(h, &st->st_mtim, sizeof(st->st_mtim));
	strbuf_addf(sb, "/nobid-%016llx.v%d.cpst", (unsigned long long)h, CP_ST_VERSION_MAJOR);
}

static int recover_to_buffer(const char *path, int flags, const struct cp_struct_options *opt,
			     const struct stat *st, void **buf, size_t *len)
{
	struct cp_module m;
	int rc = cp_module_open(&m, path, CP_MODULE_STRICT_DWARF);
	if (rc)
		return rc;
	struct cp_structure_builder b;
	cp_structure_builder_init(&b);
	struct cp_struct_options o = opt ? *opt : (struct cp_struct_options){0};
	o.no_loops = !!(flags & CP_STRUCT_NO_LOOPS);
	rc = cp_struct_recover(&m, &b, &o);
	cp_module_release(&m); /* before serializing: libdw's caches are the bulk of memory */
	if (!rc) {
		b.hdr.module_mtime = st ? (int64_t)st->st_mtim.tv_sec : 0;
		rc = cp_structure_builder_finish(&b, buf, len);
	}
	cp_structure_builder_release(&b);
	return rc;
}

int cp_struct_build(const char *path, int flags, const struct cp_struct_options *opt, void **buf,
		    size_t *len)
{
	struct stat st;
	return recover_to_buffer(path, flags, opt, stat(path, &st) ? NULL : &st, buf, len);
}

/* A cached entry is used only if it describes this very file and was written by an
 * analyzer of this file version (a minor version marks a change of what it recovers). */
static int cache_matches(const struct cp_structure *st, const struct cp_elf_image *im,
			 const struct stat *sb)
{
	const struct cp_st_header *h = st->hdr;
	if (h->version_minor != CP_ST_VERSION_MINOR)
		return 0;
	if (im->build_id_len) /* the size too: a stripped copy keeps the build-id */
		return h->build_id_len == (im->build_id_len < 32 ? im->build_id_len : 32) &&
		       !memcmp(h->build_id, im->build_id, h->build_id_len) &&
		       h->module_size == (uint64_t)sb->st_size;
	return h->module_size == (uint64_t)sb->st_size &&
	       h->module_mtime == (int64_t)sb->st_mtim.tv_sec;
}

static void try_write(struct cp_struct_result *res, struct strbuf *dir, const char *file,
		      const void *buf, size_t len)
{
	if (!dir->len || mkdir_p(dir->buf)) {
		struct strbuf w;
		strbuf_init(&w);
		strbuf_addf(&w, "cannot create cache directory %s: %s",
			    dir->len ? dir->buf : "(no HOME)", strerror(errno));
		res->cache_warning = strbuf_detach(&w);
		return;
	}
	if (cp_write_file_atomic(file, buf, len, 0))
		res->cache_warning = xstrdup(cp_error_message());
	else
		res->cache_path = xstrdup(file);
}

int cp_struct_get(const char *path, int flags, const struct cp_struct_options *opt,
		  struct cp_structure *out, struct cp_struct_result *res)
{
	memset(res, 0, sizeof(*res));
	struct cp_elf_image im;
	struct stat sb;
	int rc = cp_elf_image_open(&im, path);
	if (rc)
		return rc;
	fstat(im.fd, &sb);
	struct strbuf dir, file;
	strbuf_init(&dir);
	strbuf_init(&file);
	cp_struct_cache_dir(&dir);
	strbuf_addstr(&file, dir.buf);
	cache_key(&im, &sb, &file);
	int use_cache = dir.len && !(flags & CP_STRUCT_NO_LOOPS);
	if (use_cache && !(flags & CP_STRUCT_NO_CACHE)) {
		/* A missing, stale or corrupt entry is simply recomputed. */
		if (!cp_structure_read(out, file.buf)) {
			if (cache_matches(out, &im, &sb)) {
				res->from_cache = 1;
				res->cache_path = xstrdup(file.buf);
				goto out;
			}
			cp_structure_release(out);
		}
		cp_error_clear();
	}
	void *buf = NULL;
	size_t len = 0;
	rc = recover_to_buffer(path, flags, opt, &sb, &buf, &len);
	if (!rc && use_cache)
		try_write(res, &dir, file.buf, buf, len);
	if (!rc)
		rc = cp_structure_adopt(out, buf, len, path);
out:
	strbuf_release(&dir);
	strbuf_release(&file);
	cp_elf_image_release(&im);
	return rc;
}

void cp_struct_result_release(struct cp_struct_result *res)
{
	free(res->cache_path);
	free(res->cache_warning);
	memset(res, 0, sizeof(*res));
}
