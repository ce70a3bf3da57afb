/* Structure files cached by build-id: $XDG_CACHE_HOME/callpath/struct/ (or
 * ~/.cache/callpath/struct/), named <build-id>.v<major>.cpst; modules without a build-id
 * are keyed by a hash of their absolute path, size and mtime (nobid-<hash>.v1.cpst). */
#ifndef CP_ANALYZE_STRUCTURE_CACHE_H
#define CP_ANALYZE_STRUCTURE_CACHE_H

#include "analyze/structure/recover.h"
#include "base/strbuf.h"
#include "format/structure.h"

enum {
	CP_STRUCT_NO_CACHE = 1 << 0, /* recompute (and refresh the cache entry) */
	CP_STRUCT_NO_LOOPS = 1 << 1, /* skip CFG/loops; never read from or written to cache */
};

struct cp_struct_result {
	int from_cache;
	char *cache_path;    /* entry read or written, or NULL (cache unusable) */
	char *cache_warning; /* why the cache could not be written, or NULL */
};

/* The structure of the module at path, from the cache or recovered (then cached). */
int cp_struct_get(const char *path, int flags, const struct cp_struct_options *opt,
		  struct cp_structure *out, struct cp_struct_result *res);
void cp_struct_result_release(struct cp_struct_result *res);

/* Recovers without the cache into a serialized buffer (for -o FILE). */
int cp_struct_build(const char *path, int flags, const struct cp_struct_options *opt, void **buf,
		    size_t *len);

/* The cache directory ("" when neither XDG_CACHE_HOME nor HOME is set). */
void cp_struct_cache_dir(struct strbuf *sb);

#endif
