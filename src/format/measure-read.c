/* Reader of the measurement files: every field that steers a read is checked against the
 * bytes actually present before it is used. */
#include "format/measure-read.h"

#include "base/error.h"
#include "base/xalloc.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define MODULE_ID_LIMIT (1u << 22)

/* What a failed parse of x made, freed by release(x), all but x->file (the caller's). */
#define RELEASE_BUT_FILE(x, release)                                                               \
	do {                                                                                       \
		char *keep_ = (x)->file;                                                           \
		(x)->file = NULL;                                                                  \
		release(x);                                                                        \
		(x)->file = keep_;                                                                 \
	} while (0)

static uint64_t load_used(const void *buf)
{
	const char *p = (const char *)buf + offsetof(struct cp_mf_header, used);
	uint64_t used;
	if (((uintptr_t)p & 7) == 0)
		return __atomic_load_n((const uint64_t *)p, __ATOMIC_ACQUIRE);
	memcpy(&used, p, sizeof used);
	return used;
}

/* Checks the common header and copies the kind's fixed part (fixed bytes) into out. */
static int header_check(const void *buf, size_t size, const char *name, uint32_t kind, size_t fixed,
			void *out, uint64_t *used_out)
{
	struct cp_mf_header h;
	if (size < sizeof h)
		return cp_error(CP_EFORMAT,
				"file %s: truncated at offset %zu, the header needs %zu bytes",
				name, size, sizeof h);
	memcpy(&h, buf, sizeof h);
	if (memcmp(h.magic, CP_MF_MAGIC, sizeof h.magic))
		return cp_error(CP_EFORMAT,
				"file %s: bad magic at offset 0: not a callpath measurement file",
				name);
	if (h.version > CP_MF_VERSION)
		return cp_error(CP_EFORMAT,
				"file %s: format version %u (offset %zu) is newer than this "
				"callpath reads (%d); use a newer callpath",
				name, h.version, offsetof(struct cp_mf_header, version),
				CP_MF_VERSION);
	if (h.version == 0)
		return cp_error(CP_EFORMAT, "file %s: corrupt version 0 at offset %zu", name,
				offsetof(struct cp_mf_header, version));
	if (h.kind != kind)
		return cp_error(CP_EFORMAT, "file %s: kind %u at offset %zu, expected %u (%s file)",
				name, h.kind, offsetof(struct cp_mf_header, kind), kind,
				kind == CP_MF_KIND_PROCESS ? "process" : "thread");
	if (h.header_size < fixed || h.header_size % 8)
		return cp_error(CP_EFORMAT,
				"file %s: header_size %u at offset %zu is invalid (at least %zu, a "
				"multiple of 8)",
				name, h.header_size, offsetof(struct cp_mf_header, header_size),
				fixed);
	uint64_t used = load_used(buf);
	if (used < h.header_size)
		return cp_error(CP_EFORMAT,
				"file %s: used %llu at offset %zu is smaller than header_size %u",
				name, (unsigned long long)used, offsetof(struct cp_mf_header, used),
				h.header_size);
	if (used > size)
		return cp_error(CP_EFORMAT,
				"file %s: truncated at offset %zu, header says %llu bytes", name,
				size, (unsigned long long)used);
	if (h.version_minor >= 1 &&
	    (h.rank < CP_MF_NO_RANK || (h.nranks && h.rank >= (int64_t)h.nranks)))
		return cp_error(CP_EFORMAT, "file %s: rank %d of %u at offset %zu is invalid", name,
				h.rank, h.nranks, offsetof(struct cp_mf_header, rank));
	memcpy(out, buf, fixed);
	struct cp_mf_header *oh = out;
	oh->used = used;
	if (h.version_minor < 1) { /* written before the rank fields existed */
		oh->rank = CP_MF_NO_RANK;
		oh->nranks = 0;
	}
	*used_out = used;
	return 0;
}

/* ---- process file ---- */

static char **strings_split(const char *p, size_t len, size_t *n)
{
	char **v = NULL;
	size_t alloc = 0;
	*n = 0;
	size_t i = 0;
	while (i < len) {
		const char *end = memchr(p + i, 0, len - i);
		size_t l = end ? (size_t)(end - (p + i)) : len - i;
		XGROW(v, *n + 1, alloc);
		v[(*n)++] = xstrndup(p + i, l);
		i += l + 1;
	}
	return v;
}

static void strings_free(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

static int rec_module(struct cp_mf_proc *p, const char *pay, size_t len, const char *name,
		      uint64_t off, size_t *alloc)
{
	struct cp_mf_module m;
	if (len < sizeof m + 1)
		return cp_error(CP_EFORMAT,
				"file %s: module record at offset %llu is too short (%zu bytes)",
				name, (unsigned long long)off, len);
	memcpy(&m, pay, sizeof m);
	if (m.build_id_len > sizeof m.build_id)
		return cp_error(CP_EFORMAT,
				"file %s: module record at offset %llu: build_id_len %u > 32", name,
				(unsigned long long)off, m.build_id_len);
	if (m.id >= MODULE_ID_LIMIT)
		return cp_error(CP_EFORMAT,
				"file %s: module record at offset %llu: id %u is out of range",
				name, (unsigned long long)off, m.id);
	if (cp_mf_proc_module(p, m.id) >= 0)
		return cp_error(CP_EFORMAT,
				"file %s: module record at offset %llu: duplicate id %u", name,
				(unsigned long long)off, m.id);
	XGROW(p->modules, p->nmodules + 1, *alloc);
	struct cp_mf_module_info *mi = &p->modules[p->nmodules];
	memset(mi, 0, sizeof *mi);
	mi->id = m.id;
	mi->build_id_len = m.build_id_len;
	mi->bias = m.bias;
	mi->text_lo = m.text_lo;
	mi->text_hi = m.text_hi;
	mi->load_seq = m.load_seq;
	memcpy(mi->build_id, m.build_id, sizeof mi->build_id);
	mi->path = xstrndup(pay + sizeof m, strnlen(pay + sizeof m, len - sizeof m));
	if (m.id >= p->module_index_len) {
		size_t n = p->module_index_len ? p->module_index_len : 16;
		while (n <= m.id)
			n *= 2;
		p->module_index = xrealloc(p->module_index, n * sizeof(*p->module_index));
		for (size_t i = p->module_index_len; i < n; i++)
			p->module_index[i] = UINT32_MAX;
		p->module_index_len = n;
	}
	p->module_index[m.id] = (uint32_t)p->nmodules++;
	return 0;
}

static int rec_unload(struct cp_mf_proc *p, const char *pay, size_t len, const char *name,
		      uint64_t off)
{
	struct cp_mf_unload u;
	if (len < sizeof u)
		return cp_error(CP_EFORMAT, "file %s: unload record at offset %llu is too short",
				name, (unsigned long long)off);
	memcpy(&u, pay, sizeof u);
	long i = cp_mf_proc_module(p, u.id);
	if (i < 0)
		return cp_error(CP_EFORMAT,
				"file %s: unload record at offset %llu names unknown module %u",
				name, (unsigned long long)off, u.id);
	p->modules[i].unloaded = 1;
	return 0;
}

/* THREAD and UNPACK records, in file order: the last one naming a tidx decides. */
struct pack_rec {
	uint32_t tidx;
	uint32_t is_thread;
	uint64_t off; /* of the payload */
	uint64_t len;
	size_t order;
};

struct proc_parse {
	size_t mod_alloc, note_alloc;
	struct pack_rec *packs;
	size_t npacks, packs_alloc;
};

static int rec_pack(struct proc_parse *pp, uint32_t type, const char *pay, size_t len,
		    const char *name, uint64_t off)
{
	struct pack_rec r = {.is_thread = type == CP_MF_REC_THREAD,
			     .off = off + sizeof(struct cp_mf_record),
			     .len = len,
			     .order = pp->npacks};
	if (r.is_thread) {
		if (len < sizeof(struct cp_mf_thread))
			return cp_error(
			    CP_EFORMAT,
			    "file %s: thread record at offset %llu is too short (%zu bytes)", name,
			    (unsigned long long)off, len);
		memcpy(&r.tidx, pay + offsetof(struct cp_mf_thread, tidx), sizeof r.tidx);
	} else {
		struct cp_mf_unpack u;
		if (len < sizeof u)
			return cp_error(CP_EFORMAT,
					"file %s: unpack record at offset %llu is too short", name,
					(unsigned long long)off);
		memcpy(&u, pay, sizeof u);
		r.tidx = u.tidx;
	}
	XGROW(pp->packs, pp->npacks + 1, pp->packs_alloc);
	pp->packs[pp->npacks++] = r;
	return 0;
}

/* A communicator's name (minor 4); the last record of a number wins. */
static int rec_mpi_comm(struct cp_mf_proc *p, const char *pay, size_t len, const char *name,
			uint64_t off)
{
	struct cp_mf_mpi_comm c;
	if (len < sizeof c)
		return cp_error(CP_EFORMAT, "file %s: MPI_COMM record at offset %llu is truncated",
				name, (unsigned long long)off);
	memcpy(&c, pay, sizeof c);
	char *text = xstrndup(pay + sizeof c, strnlen(pay + sizeof c, len - sizeof c));
	for (size_t i = 0; i < p->ncomms; i++)
		if (p->comms[i].comm == c.comm) {
			free(p->comms[i].name);
			p->comms[i].name = text;
			return 0;
		}
	p->comms = xrealloc(p->comms, (p->ncomms + 1) * sizeof *p->comms);
	p->comms[p->ncomms++] = (struct cp_mf_comm_name){c.comm, text};
	return 0;
}

static int rec_one(struct cp_mf_proc *p, uint32_t type, const char *pay, size_t len,
		   const char *name, uint64_t off, struct proc_parse *pp)
{
	size_t *mod_alloc = &pp->mod_alloc, *note_alloc = &pp->note_alloc;
	switch (type) {
	case CP_MF_REC_CMDLINE:
		strings_free(p->argv, p->argc);
		p->argv = strings_split(pay, len, &p->argc);
		return 0;
	case CP_MF_REC_EXE:
		free(p->exe);
		p->exe = xstrndup(pay, strnlen(pay, len));
		return 0;
	case CP_MF_REC_MODULE:
		return rec_module(p, pay, len, name, off, mod_alloc);
	case CP_MF_REC_UNLOAD:
		return rec_unload(p, pay, len, name, off);
	case CP_MF_REC_NOTE:
		XGROW(p->notes, p->nnotes + 1, *note_alloc);
		p->notes[p->nnotes++] = xstrndup(pay, strnlen(pay, len));
		return 0;
	case CP_MF_REC_ENV: {
		size_t n;
		char **v = strings_split(pay, len, &n);
		p->env = xrealloc(p->env, (p->nenv + n + 1) * sizeof(*p->env));
		if (n) /* an empty record splits into no strings (v may be NULL) */
			memcpy(p->env + p->nenv, v, n * sizeof(*v));
		p->nenv += n;
		free(v);
		return 0;
	}
	case CP_MF_REC_THREAD:
	case CP_MF_REC_UNPACK:
		return rec_pack(pp, type, pay, len, name, off);
	case CP_MF_REC_MPI_COMM:
		return rec_mpi_comm(p, pay, len, name, off);
	default: /* a record type of a later minor version: skip it */
		return 0;
	}
}

static int proc_records(struct cp_mf_proc *p, const char *buf, uint64_t used, const char *name,
			struct proc_parse *pp)
{
	uint64_t off = p->hdr.h.header_size;
	while (off < used) {
		struct cp_mf_record r;
		if (used - off < sizeof r)
			return cp_error(
			    CP_EFORMAT,
			    "file %s: record head at offset %llu runs past the end (%llu bytes)",
			    name, (unsigned long long)off, (unsigned long long)used);
		memcpy(&r, buf + off, sizeof r);
		if (r.size < sizeof r || r.size > used - off)
			return cp_error(CP_EFORMAT,
					"file %s: record at offset %llu has size %u, beyond the "
					"%llu bytes used",
					name, (unsigned long long)off, r.size,
					(unsigned long long)used);
		int rc = rec_one(p, r.type, buf + off + sizeof r, r.size - sizeof r, name, off, pp);
		if (rc)
			return rc;
		off += ((uint64_t)r.size + 7) & ~7ull;
	}
	return 0;
}

static int pack_cmp(const void *a, const void *b)
{
	const struct pack_rec *x = a, *y = b;
	if (x->tidx != y->tidx)
		return x->tidx < y->tidx ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

/* One packed thread, checked as a thread file of this process image whose size is the
 * record's payload. */
static int packed_parse(struct cp_mf_proc *p, const char *buf, const struct pack_rec *r,
			const char *name, struct cp_mf_thr *t)
{
	char what[PATH_MAX + 64];
	snprintf(what, sizeof what, "%s (thread record at offset %llu)", name,
		 (unsigned long long)(r->off - sizeof(struct cp_mf_record)));
	int rc = cp_mf_thr_parse(t, buf + r->off, r->len, what, p);
	if (rc)
		return rc;
	if (t->hdr.h.used != r->len || t->hdr.pid != p->hdr.pid || t->hdr.gen != p->hdr.gen)
		rc = cp_error(CP_EFORMAT,
			      "file %s: used %llu, pid %d or gen %u inside do not match the record "
			      "(%llu bytes) or process file",
			      what, (unsigned long long)t->hdr.h.used, t->hdr.pid, t->hdr.gen,
			      (unsigned long long)r->len);
	return rc;
}

/* After all records (a packed tree may name any module of the file): the threads whose
 * last THREAD/UNPACK record is a THREAD record, parsed, by tidx. */
static int proc_packed(struct cp_mf_proc *p, const char *buf, const char *name,
		       struct proc_parse *pp)
{
	if (!pp->npacks)
		return 0;
	qsort(pp->packs, pp->npacks, sizeof *pp->packs, pack_cmp);
	p->packed = xcalloc(pp->npacks, sizeof(*p->packed));
	for (size_t i = 0; i < pp->npacks; i++) {
		const struct pack_rec *r = &pp->packs[i];
		if ((i + 1 < pp->npacks && pp->packs[i + 1].tidx == r->tidx) || !r->is_thread)
			continue;
		struct cp_mf_thr *t = &p->packed[p->npacked];
		int rc = packed_parse(p, buf, r, name, t);
		if (rc) {
			cp_mf_thr_release(t);
			return rc;
		}
		p->npacked++;
	}
	return 0;
}

int cp_mf_proc_parse(struct cp_mf_proc *p, const void *buf, size_t size, const char *name)
{
	uint64_t used;
	memset(p, 0, sizeof *p);
	p->file = xstrdup(name);
	int rc = header_check(buf, size, name, CP_MF_KIND_PROCESS, sizeof p->hdr, &p->hdr, &used);
	if (rc)
		goto out;
	if (p->hdr.nmetrics > CP_MF_MAX_METRICS) {
		rc = cp_error(CP_EFORMAT, "file %s: nmetrics %u at offset %zu exceeds %d", name,
			      p->hdr.nmetrics, offsetof(struct cp_mf_process, nmetrics),
			      CP_MF_MAX_METRICS);
		goto out;
	}
	for (uint32_t i = 0; i < p->hdr.nmetrics; i++) {
		struct cp_mf_metric *m = &p->hdr.metrics[i];
		m->name[sizeof m->name - 1] = 0;
		m->unit[sizeof m->unit - 1] = 0;
	}
	p->hdr.hostname[sizeof p->hdr.hostname - 1] = 0;
	struct proc_parse pp;
	memset(&pp, 0, sizeof pp);
	rc = proc_records(p, buf, used, name, &pp);
	if (!rc)
		rc = proc_packed(p, buf, name, &pp);
	free(pp.packs);
out:
	if (rc)
		RELEASE_BUT_FILE(p, cp_mf_proc_release);
	return rc;
}

void cp_mf_proc_release(struct cp_mf_proc *p)
{
	free(p->file);
	strings_free(p->argv, p->argc);
	free(p->exe);
	for (size_t i = 0; i < p->nmodules; i++)
		free(p->modules[i].path);
	free(p->modules);
	free(p->module_index);
	strings_free(p->notes, p->nnotes);
	strings_free(p->env, p->nenv);
	for (size_t i = 0; i < p->ncomms; i++)
		free(p->comms[i].name);
	free(p->comms);
	for (size_t i = 0; i < p->npacked; i++)
		cp_mf_thr_release(&p->packed[i]);
	free(p->packed);
	memset(p, 0, sizeof *p);
}

long cp_mf_proc_module(const struct cp_mf_proc *p, uint32_t id)
{
	if (id >= p->module_index_len || p->module_index[id] == UINT32_MAX)
		return -1;
	return p->module_index[id];
}

const struct cp_mf_thr *cp_mf_proc_packed(const struct cp_mf_proc *p, uint32_t tidx)
{
	size_t lo = 0, hi = p->npacked;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint32_t m = p->packed[mid].hdr.tidx;
		if (m == tidx)
			return &p->packed[mid];
		if (m < tidx)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* ---- thread file ---- */

static int node_check(const struct cp_mf_thr *t, size_t i, const struct cp_mf_rnode *n,
		      const struct cp_mf_proc *proc, uint64_t off)
{
	const char *name = t->file;
	if (i == 0) {
		if (n->kind != CP_MF_NODE_ROOT || n->parent != UINT32_MAX)
			return cp_error(
			    CP_EFORMAT,
			    "file %s: node 0 at offset %llu is not the root (kind %u, parent %u)",
			    name, (unsigned long long)off, n->kind, n->parent);
		return 0;
	}
	if (n->parent >= i)
		return cp_error(
		    CP_EFORMAT,
		    "file %s: node %zu at offset %llu has parent %u, not an earlier node", name, i,
		    (unsigned long long)off, n->parent);
	if (n->kind == CP_MF_NODE_ROOT || n->kind > CP_MF_NODE_IDLE)
		return cp_error(CP_EFORMAT, "file %s: node %zu at offset %llu has invalid kind %u",
				name, i, (unsigned long long)off, n->kind);
	if (proc && n->module != CP_MF_MODULE_NONE && n->kind != CP_MF_NODE_PARTIAL &&
	    cp_mf_proc_module(proc, n->module) < 0)
		return cp_error(
		    CP_EFORMAT,
		    "file %s: node %zu at offset %llu names module %u, which %s does not list",
		    name, i, (unsigned long long)off, n->module, proc->file);
	return 0;
}

static int thr_nodes(struct cp_mf_thr *t, const char *buf, uint64_t used,
		     const struct cp_mf_proc *proc)
{
	uint32_t nm = t->hdr.nmetrics;
	uint64_t hs = t->hdr.h.header_size, ns = t->hdr.node_size;
	t->nnodes = (used - hs) / ns;
	t->tail_bytes = (used - hs) % ns;
	t->nodes = xcalloc(t->nnodes ? t->nnodes : 1, sizeof(*t->nodes));
	t->values = xcalloc(t->nnodes * nm + 1, sizeof(uint64_t));
	uint16_t *depth = xcalloc(t->nnodes ? t->nnodes : 1, sizeof(*depth));
	int rc = 0;
	for (size_t i = 0; i < t->nnodes && !rc; i++) {
		uint64_t off = hs + i * ns;
		struct cp_mf_node raw;
		memcpy(&raw, buf + off, sizeof raw);
		struct cp_mf_rnode *n = &t->nodes[i];
		n->parent = raw.parent;
		n->kind = raw.kind;
		n->module = raw.module;
		n->offset = raw.offset;
		rc = node_check(t, i, n, proc, off);
		if (rc)
			break;
		memcpy(t->values + i * nm, buf + off + sizeof raw, nm * sizeof(uint64_t));
		if (i == 0)
			continue;
		depth[i] = depth[n->parent] + 1;
		if (depth[i] > CP_MF_READ_MAX_DEPTH)
			rc = cp_error(CP_EFORMAT,
				      "file %s: node %zu at offset %llu is %d frames deep, more "
				      "than any recorded stack",
				      t->file, i, (unsigned long long)off, depth[i]);
	}
	free(depth);
	return rc;
}

/* The sync-object table (minor 3) after the fixed part. */
static int thr_sync(struct cp_mf_thr *t, const char *buf)
{
	uint64_t slots = t->hdr.sync_slots;
	if (t->hdr.h.version_minor < 3 || t->hdr.h.version < 2 || !slots) {
		t->hdr.sync_slots = 0;
		t->hdr.sync_lost_ns = t->hdr.sync_lost_waits = 0;
		return 0;
	}
	if (sizeof(struct cp_mf_thread) + slots * sizeof(struct cp_mf_sync_obj) >
	    t->hdr.h.header_size)
		return cp_error(
		    CP_EFORMAT,
		    "file %s: sync_slots %llu at offset %zu do not fit in header_size %u", t->file,
		    (unsigned long long)slots, offsetof(struct cp_mf_thread, sync_slots),
		    t->hdr.h.header_size);
	t->sync = xcalloc(slots, sizeof *t->sync);
	for (uint64_t i = 0; i < slots; i++) {
		struct cp_mf_sync_obj e;
		memcpy(&e, buf + sizeof(struct cp_mf_thread) + i * sizeof e, sizeof e);
		if (e.kind == 0 || e.kind > CP_MF_SYNC_KIND_MAX || e.node >= t->nnodes)
			continue;
		t->sync[t->nsync++] = e;
	}
	return 0;
}

int cp_mf_thr_parse(struct cp_mf_thr *t, const void *buf, size_t size, const char *name,
		    const struct cp_mf_proc *proc)
{
	uint64_t used;
	memset(t, 0, sizeof *t);
	t->file = xstrdup(name);
	int rc = header_check(buf, size, name, CP_MF_KIND_THREAD, sizeof t->hdr, &t->hdr, &used);
	if (rc)
		goto out;
	uint32_t nm = t->hdr.nmetrics;
	if (nm > CP_MF_MAX_METRICS || (proc && nm != proc->hdr.nmetrics)) {
		rc = cp_error(CP_EFORMAT,
			      "file %s: nmetrics %u at offset %zu is invalid (process file has %u)",
			      name, nm, offsetof(struct cp_mf_thread, nmetrics),
			      proc ? proc->hdr.nmetrics : 0);
		goto out;
	}
	uint32_t ns = t->hdr.node_size;
	if (ns < sizeof(struct cp_mf_node) + 8 * nm || ns % 8 || ns > 4096) {
		rc = cp_error(CP_EFORMAT,
			      "file %s: node_size %u at offset %zu is invalid for %u metrics", name,
			      ns, offsetof(struct cp_mf_thread, node_size), nm);
		goto out;
	}
	t->hdr.name[sizeof t->hdr.name - 1] = 0;
	rc = thr_nodes(t, buf, used, proc);
	if (!rc)
		rc = thr_sync(t, buf);
out:
	if (rc)
		RELEASE_BUT_FILE(t, cp_mf_thr_release);
	return rc;
}

void cp_mf_thr_copy(struct cp_mf_thr *dst, const struct cp_mf_thr *src)
{
	*dst = *src;
	dst->file = xstrdup(src->file);
	size_t nn = src->nnodes ? src->nnodes : 1;
	dst->nodes = xmalloc(nn * sizeof(*dst->nodes));
	memcpy(dst->nodes, src->nodes, src->nnodes * sizeof(*dst->nodes));
	size_t nv = src->nnodes * src->hdr.nmetrics + 1;
	dst->values = xmalloc(nv * sizeof(*dst->values));
	memcpy(dst->values, src->values, nv * sizeof(*dst->values));
	dst->sync = NULL;
	if (src->nsync) {
		dst->sync = xmalloc(src->nsync * sizeof(*dst->sync));
		memcpy(dst->sync, src->sync, src->nsync * sizeof(*dst->sync));
	}
}

void cp_mf_thr_release(struct cp_mf_thr *t)
{
	free(t->file);
	free(t->nodes);
	free(t->values);
	free(t->sync);
	memset(t, 0, sizeof *t);
}

/* ---- files and directories ---- */

int cp_mf_file_map(const char *path, void **buf, size_t *size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return cp_error(errno == ENOENT ? CP_ENOENT : CP_EIO, "cannot open %s: %s", path,
				strerror(errno));
	struct stat st;
	int rc = 0;
	if (fstat(fd, &st)) {
		rc = cp_error(CP_EIO, "cannot stat %s: %s", path, strerror(errno));
		goto out;
	}
	*size = (size_t)st.st_size;
	if (st.st_size == 0) {
		rc = cp_error(CP_EFORMAT, "file %s: truncated at offset 0 (empty file)", path);
		goto out;
	}
	*buf = mmap(NULL, *size, PROT_READ, MAP_SHARED, fd, 0);
	if (*buf == MAP_FAILED)
		rc = cp_error(CP_EIO, "cannot map %s: %s", path, strerror(errno));
out:
	close(fd);
	return rc;
}

void cp_mf_file_unmap(void *buf, size_t size)
{
	if (buf && size)
		munmap(buf, size);
}
