#include "format/structure.h"

#include "base/error.h"
#include "base/hash.h"
#include "base/xalloc.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

_Static_assert(sizeof(struct cp_st_header) == 128, "header layout");
_Static_assert(sizeof(struct cp_st_scope) == 48, "scope layout");
_Static_assert(sizeof(struct cp_st_range) == 16, "range layout");
_Static_assert(sizeof(struct cp_st_edge) == 24, "edge layout");
_Static_assert(sizeof(struct cp_st_note) == 16, "note layout");

/* ---- reading ---- */

static int check_layout(const struct cp_st_header *h, size_t len, const char *name,
			size_t *strings_off)
{
	uint64_t off = h->header_size;
	uint64_t sizes[4] = {(uint64_t)h->nscopes * sizeof(struct cp_st_scope),
			     (uint64_t)h->nranges * sizeof(struct cp_st_range),
			     (uint64_t)h->nedges * sizeof(struct cp_st_edge),
			     (uint64_t)h->nnotes * sizeof(struct cp_st_note)};
	static const char *what[4] = {"scopes", "ranges", "edges", "notes"};
	for (int i = 0; i < 4; i++) {
		if (sizes[i] > len || off > len - sizes[i])
			return cp_error(CP_EFORMAT,
					"structure file %s: truncated: %s table at offset "
					"%llu needs %llu bytes, the file has %zu",
					name, what[i], (unsigned long long)off,
					(unsigned long long)sizes[i], len);
		off += sizes[i];
	}
	*strings_off = off;
	if (h->strings_size == 0 || h->strings_size > len - off || off + h->strings_size != len)
		return cp_error(CP_EFORMAT,
				"structure file %s: string table at offset %llu: size %u "
				"does not match the file size %zu",
				name, (unsigned long long)off, h->strings_size, len);
	return 0;
}

static int check_header(const struct cp_st_header *h, size_t len, const char *name)
{
	if (len < sizeof(*h) || memcmp(h->magic, CP_ST_MAGIC, 8))
		return cp_error(CP_EFORMAT, "%s: not a callpath structure file (%s at offset 0)",
				name, len < sizeof(*h) ? "too short" : "bad magic");
	if (h->version_major != CP_ST_VERSION_MAJOR)
		return cp_error(CP_EFORMAT,
				"structure file %s: version %u.%u at offset 8 is not "
				"supported (this callpath reads %d.x); rerun `callpath struct`",
				name, h->version_major, h->version_minor, CP_ST_VERSION_MAJOR);
	if (h->header_size < sizeof(*h) || h->header_size > len || (h->header_size & 7))
		return cp_error(CP_EFORMAT, "structure file %s: bad header size %u at offset 12",
				name, h->header_size);
	if (h->file_size != len)
		return cp_error(CP_EFORMAT,
				"structure file %s: truncated or extended: header at "
				"offset 16 says %llu bytes, the file has %zu",
				name, (unsigned long long)h->file_size, len);
	if (h->checksum != cp_fnv1a(CP_ST_CHECKSUM_SEED, (const uint8_t *)h + h->header_size,
				    len - h->header_size))
		return cp_error(CP_EFORMAT,
				"structure file %s: checksum mismatch (header offset "
				"24): the file is corrupt",
				name);
	if (h->build_id_len > sizeof(h->build_id))
		return cp_error(CP_EFORMAT, "structure file %s: bad build-id length %u", name,
				h->build_id_len);
	return 0;
}

static int check_string(const struct cp_structure *st, uint32_t off, const char *name,
			const char *what, size_t index, size_t at)
{
	if (off >= st->hdr->strings_size)
		return cp_error(CP_EFORMAT,
				"structure file %s: %s %zu at offset %zu: string offset "
				"%u out of range",
				name, what, index, at, off);
	return 0;
}

static int check_scopes(const struct cp_structure *st, const char *name)
{
	size_t base = st->hdr->header_size;
	for (size_t i = 0; i < st->hdr->nscopes; i++) {
		const struct cp_st_scope *s = &st->scopes[i];
		size_t at = base + i * sizeof(*s);
		if (s->kind < CP_ST_PROC || s->kind > CP_ST_STMT)
			return cp_error(CP_EFORMAT,
					"structure file %s: scope %zu at offset %zu: bad "
					"kind %u",
					name, i, at, s->kind);
		if ((s->kind == CP_ST_PROC) != (s->parent == CP_ST_NONE) ||
		    (s->parent != CP_ST_NONE && s->parent >= i))
			return cp_error(CP_EFORMAT,
					"structure file %s: scope %zu at offset %zu: bad "
					"parent %u",
					name, i, at, s->parent);
		int rc = check_string(st, s->name, name, "scope", i, at);
		if (!rc)
			rc = check_string(st, s->file, name, "scope", i, at);
		if (!rc && (s->kind == CP_ST_PROC || s->kind == CP_ST_INLINE))
			rc = check_string(st, s->aux, name, "scope", i, at);
		if (rc)
			return rc;
	}
	return 0;
}

static int check_tables(const struct cp_structure *st, const char *name)
{
	const struct cp_st_header *h = st->hdr;
	size_t base = h->header_size + h->nscopes * sizeof(struct cp_st_scope);
	for (size_t i = 0; i < h->nranges; i++) {
		const struct cp_st_range *r = &st->ranges[i];
		size_t at = base + i * sizeof(*r);
		if (r->scope >= h->nscopes || !r->len || r->lo + r->len < r->lo ||
		    (i && r->lo < st->ranges[i - 1].lo + st->ranges[i - 1].len))
			return cp_error(CP_EFORMAT,
					"structure file %s: range %zu at offset %zu is "
					"invalid (unsorted, overlapping or bad scope)",
					name, i, at);
	}
	base += h->nranges * sizeof(struct cp_st_range);
	for (size_t i = 0; i < h->nedges; i++)
		if (st->edges[i].loop >= h->nscopes ||
		    st->scopes[st->edges[i].loop].kind != CP_ST_LOOP)
			return cp_error(CP_EFORMAT,
					"structure file %s: edge %zu at offset %zu: bad "
					"loop index",
					name, i, base + i * sizeof(struct cp_st_edge));
	base += h->nedges * sizeof(struct cp_st_edge);
	for (size_t i = 0; i < h->nnotes; i++)
		if (st->notes[i].scope >= h->nscopes)
			return cp_error(CP_EFORMAT,
					"structure file %s: note %zu at offset %zu: bad "
					"scope",
					name, i, base + i * sizeof(struct cp_st_note));
	if (st->strings[h->strings_size - 1] || h->module_path >= h->strings_size)
		return cp_error(CP_EFORMAT, "structure file %s: string table is not terminated",
				name);
	return 0;
}

int cp_structure_load(struct cp_structure *st, const void *buf, size_t len, const char *name)
{
	void *copy = xmalloc(len ? len : 1); /* aligned copy */
	memcpy(copy, buf, len);
	return cp_structure_adopt(st, copy, len, name);
}

int cp_structure_adopt(struct cp_structure *st, void *buf, size_t len, const char *name)
{
	memset(st, 0, sizeof(*st));
	st->buf = buf;
	st->size = len;
	if (len < sizeof(struct cp_st_header)) {
		cp_structure_release(st);
		return cp_error(CP_EFORMAT,
				"structure file %s: truncated: %zu bytes, the header "
				"needs %zu",
				name, len, sizeof(struct cp_st_header));
	}
	st->hdr = st->buf;
	size_t soff = 0;
	int rc = check_header(st->hdr, len, name);
	if (!rc)
		rc = check_layout(st->hdr, len, name, &soff);
	if (!rc) {
		const char *p = (const char *)st->buf + st->hdr->header_size;
		st->scopes = (const void *)p;
		p += st->hdr->nscopes * sizeof(struct cp_st_scope);
		st->ranges = (const void *)p;
		p += st->hdr->nranges * sizeof(struct cp_st_range);
		st->edges = (const void *)p;
		p += st->hdr->nedges * sizeof(struct cp_st_edge);
		st->notes = (const void *)p;
		st->strings = (const char *)st->buf + soff;
		rc = check_scopes(st, name);
	}
	if (!rc)
		rc = check_tables(st, name);
	if (rc)
		cp_structure_release(st);
	return rc;
}

int cp_structure_read(struct cp_structure *st, const char *path)
{
	memset(st, 0, sizeof(*st));
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat sb;
	if (fd < 0 || fstat(fd, &sb)) {
		int e = errno;
		if (fd >= 0)
			close(fd);
		return cp_error(e == ENOENT ? CP_ENOENT : CP_EIO,
				"cannot open structure file %s: "
				"%s",
				path, strerror(e));
	}
	size_t len = (size_t)sb.st_size, got = 0;
	char *buf = xmalloc(len ? len : 1);
	while (got < len) {
		ssize_t n = read(fd, buf + got, len - got);
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	return cp_structure_adopt(st, buf, got, path);
}

void cp_structure_release(struct cp_structure *st)
{
	free(st->buf);
	memset(st, 0, sizeof(*st));
}

const char *cp_structure_string(const struct cp_structure *st, uint32_t off)
{
	return off < st->hdr->strings_size ? st->strings + off : "";
}

uint32_t cp_structure_lookup(const struct cp_structure *st, uint64_t addr)
{
	size_t lo = 0, hi = st->hdr->nranges;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		const struct cp_st_range *r = &st->ranges[mid];
		if (addr < r->lo)
			hi = mid;
		else if (addr - r->lo >= r->len)
			lo = mid + 1;
		else
			return r->scope;
	}
	return CP_ST_NONE;
}

int cp_structure_chain(const struct cp_structure *st, uint64_t addr, uint32_t *chain, int max)
{
	uint32_t s = cp_structure_lookup(st, addr);
	int n = 0;
	for (uint32_t t = s; t != CP_ST_NONE; t = st->scopes[t].parent)
		n++;
	int keep = n < max ? n : max;
	/* Walking up yields the innermost first: fill from the end (when n > max the
	 * outermost entries are the ones dropped). */
	int k = keep;
	for (uint32_t t = s; t != CP_ST_NONE && k > 0; t = st->scopes[t].parent)
		chain[--k] = t;
	return keep;
}

/* ---- building ---- */

void cp_structure_builder_init(struct cp_structure_builder *b)
{
	memset(b, 0, sizeof(*b));
	b->strings = xmalloc(1);
	b->strings[0] = 0; /* offset 0 is "" */
	b->strings_len = b->strings_alloc = 1;
}

void cp_structure_builder_release(struct cp_structure_builder *b)
{
	free(b->scopes);
	free(b->ranges);
	free(b->edges);
	free(b->notes);
	free(b->strings);
	cp_hashtab_release(&b->str_offs);
	memset(b, 0, sizeof(*b));
}

static int str_eq(const void *ctx, uint32_t off, const void *key)
{
	return !strcmp(((const struct cp_structure_builder *)ctx)->strings + off, key);
}

uint32_t cp_structure_builder_string(struct cp_structure_builder *b, const char *s)
{
	if (!s || !*s)
		return 0;
	uint64_t h = cp_hash_str(s);
	uint32_t found = cp_hashtab_find(&b->str_offs, h, str_eq, b, s);
	if (found != CP_HASH_NONE)
		return found;
	size_t len = strlen(s) + 1;
	XGROW(b->strings, b->strings_len + len, b->strings_alloc);
	uint32_t off = (uint32_t)b->strings_len;
	memcpy(b->strings + off, s, len);
	b->strings_len += len;
	cp_hashtab_insert(&b->str_offs, h, off);
	return off;
}

uint32_t cp_structure_builder_scope(struct cp_structure_builder *b, const struct cp_st_scope *s)
{
	XGROW(b->scopes, b->nscopes + 1, b->scopes_alloc);
	b->scopes[b->nscopes] = *s;
	if (s->kind == CP_ST_PROC)
		b->hdr.nprocs++;
	else if (s->kind == CP_ST_LOOP)
		b->hdr.nloops++;
	return (uint32_t)b->nscopes++;
}

void cp_structure_builder_range(struct cp_structure_builder *b, uint64_t lo, uint64_t hi,
				uint32_t scope)
{
	while (lo < hi) {
		uint64_t len = hi - lo > UINT32_MAX ? UINT32_MAX : hi - lo;
		XGROW(b->ranges, b->nranges + 1, b->ranges_alloc);
		b->ranges[b->nranges++] = (struct cp_st_range){lo, (uint32_t)len, scope};
		lo += len;
	}
}

void cp_structure_builder_edge(struct cp_structure_builder *b, const struct cp_st_edge *e)
{
	XGROW(b->edges, b->nedges + 1, b->edges_alloc);
	b->edges[b->nedges++] = *e;
}

void cp_structure_builder_note(struct cp_structure_builder *b, const struct cp_st_note *n)
{
	XGROW(b->notes, b->nnotes + 1, b->notes_alloc);
	b->notes[b->nnotes++] = *n;
}

static int range_cmp(const void *a, const void *b)
{
	const struct cp_st_range *x = a, *y = b;
	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

static int edge_cmp(const void *a, const void *b)
{
	const struct cp_st_edge *x = a, *y = b;
	if (x->loop != y->loop)
		return x->loop < y->loop ? -1 : 1;
	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	return x->from < y->from ? -1 : x->from > y->from;
}

/* Sorts; drops overlaps (the first range wins); merges neighbours of one scope. */
static void normalize_ranges(struct cp_structure_builder *b)
{
	if (b->nranges)
		qsort(b->ranges, b->nranges, sizeof(*b->ranges), range_cmp);
	size_t out = 0;
	for (size_t i = 0; i < b->nranges; i++) {
		struct cp_st_range r = b->ranges[i];
		if (out) {
			struct cp_st_range *p = &b->ranges[out - 1];
			uint64_t end = p->lo + p->len;
			if (r.lo < end) {
				if (r.lo + r.len <= end)
					continue;
				r.len -= (uint32_t)(end - r.lo);
				r.lo = end;
			}
			if (r.lo == end && r.scope == p->scope &&
			    (uint64_t)p->len + r.len <= UINT32_MAX) {
				p->len += r.len;
				continue;
			}
		}
		b->ranges[out++] = r;
	}
	b->nranges = out;
}

int cp_structure_builder_finish(struct cp_structure_builder *b, void **bufp, size_t *lenp)
{
	normalize_ranges(b);
	if (b->nedges)
		qsort(b->edges, b->nedges, sizeof(*b->edges), edge_cmp);
	struct cp_st_header h = b->hdr;
	memcpy(h.magic, CP_ST_MAGIC, 8);
	h.version_major = CP_ST_VERSION_MAJOR;
	h.version_minor = CP_ST_VERSION_MINOR;
	h.header_size = sizeof(h);
	h.nscopes = (uint32_t)b->nscopes;
	h.nranges = (uint32_t)b->nranges;
	h.nedges = (uint32_t)b->nedges;
	h.nnotes = (uint32_t)b->nnotes;
	h.strings_size = (uint32_t)b->strings_len;
	size_t parts[5] = {b->nscopes * sizeof(*b->scopes), b->nranges * sizeof(*b->ranges),
			   b->nedges * sizeof(*b->edges), b->nnotes * sizeof(*b->notes),
			   b->strings_len};
	const void *src[5] = {b->scopes, b->ranges, b->edges, b->notes, b->strings};
	size_t len = sizeof(h);
	for (int i = 0; i < 5; i++)
		len += parts[i];
	char *buf = xmalloc(len), *p = buf + sizeof(h);
	for (int i = 0; i < 5; i++) {
		if (parts[i])
			memcpy(p, src[i], parts[i]);
		p += parts[i];
		free((void *)src[i]);
	}
	cp_hashtab_release(&b->str_offs);
	memset(b, 0, sizeof(*b));
	h.file_size = len;
	h.checksum = cp_fnv1a(CP_ST_CHECKSUM_SEED, (uint8_t *)buf + sizeof(h), len - sizeof(h));
	memcpy(buf, &h, sizeof(h));
	*bufp = buf;
	*lenp = len;
	return 0;
}
