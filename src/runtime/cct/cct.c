/* Calling-context tree insertion (see cct.h). Runs in signal context. */
#include "runtime/cct/cct.h"

#include <errno.h>
#include <sys/mman.h>

#include "base/sigsafe/sigsafe.h"
#include "base/sigsafe/banned.h"

#define CP_CCT_TABLE_MIN 1024u

static uint64_t key_hash(uint32_t parent, uint16_t kind, uint32_t module, uint64_t offset)
{
	uint64_t h = offset * 0x9e3779b97f4a7c15ull;
	h ^= ((uint64_t)parent << 32 | (uint64_t)module) * 0xc2b2ae3d27d4eb4full;
	h ^= (uint64_t)kind * 0x165667b19e3779f9ull;
	h ^= h >> 29;
	h *= 0xbf58476d1ce4e5b9ull;
	return h ^ (h >> 32);
}

static uint32_t *table_alloc(uint32_t cap, size_t *bytes)
{
	*bytes = (size_t)cap * sizeof(uint32_t);
	void *p = mmap(NULL, *bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

static void table_put(uint32_t *table, uint32_t mask, uint64_t h, uint32_t node)
{
	uint32_t i = (uint32_t)h & mask;
	while (table[i])
		i = (i + 1) & mask;
	table[i] = node + 1;
}

/* Doubles the table, re-inserting every node from its key in the file. */
static int table_grow(struct cp_cct *c)
{
	size_t bytes;
	uint32_t cap = (c->table_mask + 1) * 2;
	uint32_t *t = table_alloc(cap, &bytes);
	if (!t)
		return -ENOMEM;
	for (uint32_t i = 1; i < c->nnodes; i++) {
		struct cp_mf_node *n = cp_cct_node(c, i);
		table_put(t, cap - 1, key_hash(n->parent, n->kind, n->module, n->offset), i);
	}
	if (c->table)
		munmap(c->table, c->table_bytes);
	c->table = t;
	c->table_mask = cap - 1;
	c->table_bytes = bytes;
	return 0;
}

static void publish(struct cp_cct *c)
{
	uint64_t used = c->hdr->h.header_size + (uint64_t)c->nnodes * c->node_size;
	__atomic_store_n(&c->hdr->h.used, used, __ATOMIC_RELEASE);
}

static uint32_t node_append(struct cp_cct *c, uint32_t parent, uint16_t kind, uint32_t module,
			    uint64_t offset)
{
	size_t end = c->hdr->h.header_size + ((size_t)c->nnodes + 1) * c->node_size;
	if (c->nnodes == CP_CCT_NONE - 1 || cp_arena_ensure(&c->arena, end))
		return CP_CCT_NONE;
	uint32_t i = c->nnodes++;
	struct cp_mf_node *n = cp_cct_node(c, i);
	/* The mapping is fresh file space (zeroes), metrics included. */
	n->parent = parent;
	n->kind = kind;
	n->module = module;
	n->offset = offset;
	publish(c);
	return i;
}

uint32_t cp_cct_child(struct cp_cct *c, uint32_t parent, uint16_t kind, uint32_t module,
		      uint64_t offset)
{
	uint64_t h = key_hash(parent, kind, module, offset);
	uint32_t i = (uint32_t)h & c->table_mask;
	for (uint32_t slot; (slot = c->table[i]) != 0; i = (i + 1) & c->table_mask) {
		struct cp_mf_node *n = cp_cct_node(c, slot - 1);
		if (n->offset == offset && n->parent == parent && n->module == module &&
		    n->kind == kind)
			return slot - 1;
	}
	if ((c->table_count + 1) * 2 > c->table_mask + 1) {
		if (table_grow(c))
			return CP_CCT_NONE;
		return cp_cct_child(c, parent, kind, module, offset);
	}
	uint32_t node = node_append(c, parent, kind, module, offset);
	if (node == CP_CCT_NONE)
		return node;
	c->table[i] = node + 1;
	c->table_count++;
	return node;
}

static void header_init(struct cp_cct *c, const struct cp_cct_info *info)
{
	struct cp_mf_thread *t = c->hdr;
	cp_ss_memcpy(t->h.magic, CP_MF_MAGIC, sizeof t->h.magic);
	t->h.version = CP_MF_VERSION;
	t->h.version_minor = CP_MF_VERSION_MINOR;
	t->h.rank = info->rank;
	t->h.nranks = info->nranks;
	t->h.kind = CP_MF_KIND_THREAD;
	t->h.header_size = (uint32_t)(sizeof *t + info->sync_slots * sizeof(struct cp_mf_sync_obj));
	t->sync_slots = info->sync_slots;
	t->pid = info->pid;
	t->tid = info->tid;
	t->gen = info->gen;
	t->tidx = info->tidx;
	t->nmetrics = info->nmetrics;
	t->node_size = c->node_size;
	t->start_ns = info->start_ns;
}

int cp_cct_create(struct cp_cct *c, const char *path, const struct cp_cct_info *info)
{
	cp_ss_memset(c, 0, sizeof *c);
	c->nmetrics = info->nmetrics;
	c->node_size = (uint32_t)(sizeof(struct cp_mf_node) + 8 * info->nmetrics);
	int rc = cp_arena_create(&c->arena, path, info->reserve, 4096);
	if (rc)
		return rc;
	c->hdr = (struct cp_mf_thread *)c->arena.base;
	header_init(c, info);
	uint32_t cap = CP_CCT_TABLE_MIN;
	c->table = table_alloc(cap, &c->table_bytes);
	if (!c->table) {
		cp_arena_release(&c->arena, 0);
		return -ENOMEM;
	}
	c->table_mask = cap - 1;
	/* Node 0, the root: not in the table (nothing looks it up). */
	if (node_append(c, CP_CCT_NONE, CP_MF_NODE_ROOT, CP_MF_MODULE_NONE, 0) != 0) {
		cp_cct_close(c, 0);
		return -ENOSPC;
	}
	return 0;
}

static uint64_t sync_hash(uint64_t object, uint32_t leaf, uint16_t kind, uint64_t aux)
{
	uint64_t h = (object ^ aux ^ ((uint64_t)leaf << 40 | kind)) * 0x9e3779b97f4a7c15ull;
	return h ^ (h >> 31);
}

void cp_cct_sync_add(struct cp_cct *c, uint64_t object, uint16_t kind, uint64_t aux, uint32_t leaf,
		     uint64_t ns)
{
	struct cp_mf_thread *h = c->hdr;
	uint32_t mask = h->sync_slots - 1;
	struct cp_mf_sync_obj *tab = (struct cp_mf_sync_obj *)(h + 1);
	uint32_t i = h->sync_slots ? (uint32_t)sync_hash(object, leaf, kind, aux) & mask : 0;
	for (uint32_t n = 0; n < h->sync_slots; n++, i = (i + 1) & mask) {
		struct cp_mf_sync_obj *e = &tab[i];
		if (e->kind == 0) {
			if ((h->sync_used + 1) * 4 > h->sync_slots * 3)
				break; /* full enough: probes would grow long */
			e->object = object;
			e->node = leaf;
			e->aux = aux;
			h->sync_used++;
			__atomic_store_n(&e->kind, kind, __ATOMIC_RELEASE);
		} else if (e->object != object || e->node != leaf || e->kind != kind ||
			   e->aux != aux) {
			continue;
		}
		e->wait_ns += ns;
		e->waits++;
		return;
	}
	h->sync_lost_ns += ns;
	h->sync_lost_waits++;
}

void cp_cct_close(struct cp_cct *c, int finished)
{
	size_t keep = 0;
	if (c->hdr) {
		if (finished)
			__atomic_or_fetch(&c->hdr->h.flags, CP_MF_FINISHED, __ATOMIC_RELEASE);
		keep = c->hdr->h.used;
	}
	if (c->table)
		munmap(c->table, c->table_bytes);
	c->table = NULL;
	cp_arena_release(&c->arena, keep);
	c->hdr = NULL;
}

void cp_cct_abandon(struct cp_cct *c)
{
	if (c->table)
		munmap(c->table, c->table_bytes);
	c->table = NULL;
	cp_arena_abandon(&c->arena);
	c->hdr = NULL;
}
