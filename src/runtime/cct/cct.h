/* A thread's calling-context tree, stored in its thread file (struct cp_mf_thread, then
 * nodes). Lookup of a child by (parent, kind, module, offset) goes through an
 * open-addressing hash table of node indices in anonymous memory (not in the file); the
 * keys themselves are read from the nodes. New nodes are appended and published with a
 * release store of the header's `used`. Memory grows with contexts, not with samples.
 * Single writer (the owning thread, usually in its signal handler); async-signal-safe.
 *
 * Module cct/ (public: cct.h, arena.h), the runtime's lowest: uses format/, base/sigsafe
 * and core/fds.h only (layering: docs/internals/runtime.md). */
#ifndef CP_RUNTIME_CCT_H
#define CP_RUNTIME_CCT_H

#include "format/measure.h"
#include "runtime/cct/arena.h"

#include <stdint.h>

#define CP_CCT_NONE 0xffffffffu

struct cp_cct {
	struct cp_arena arena;
	struct cp_mf_thread *hdr; /* == arena.base */
	uint32_t node_size;
	uint32_t nmetrics;
	uint32_t nnodes;
	uint32_t *table;     /* node index + 1 per slot, 0 = empty */
	uint32_t table_mask; /* capacity - 1 (capacity is a power of two) */
	uint32_t table_count;
	size_t table_bytes;
};

struct cp_cct_info {
	int32_t pid, tid;
	uint32_t gen, tidx, nmetrics;
	uint64_t start_ns;
	int32_t rank; /* MPI rank (CP_MF_NO_RANK) and ranks, for the header */
	uint32_t nranks;
	size_t reserve;	     /* virtual bytes to reserve for the file */
	uint32_t sync_slots; /* slots of the sync-object table (a power of two, or 0) */
};

/* Creates the thread file at path with its header and root node. 0 or -errno. */
int cp_cct_create(struct cp_cct *c, const char *path, const struct cp_cct_info *info);
/* The child of parent with this key, created if missing; CP_CCT_NONE if out of memory. */
uint32_t cp_cct_child(struct cp_cct *c, uint32_t parent, uint16_t kind, uint32_t module,
		      uint64_t offset);
static inline struct cp_mf_node *cp_cct_node(struct cp_cct *c, uint32_t i)
{
	return (struct cp_mf_node *)((char *)c->hdr + c->hdr->h.header_size +
				     (size_t)i * c->node_size);
}
/* Charges one sample of weight on metric to leaf and counts it in the header: n frames,
 * unwound with status (enum cp_unwind_status: 0 complete, 1 partial, 2 failed). Both
 * sampling drivers (the runtime's signal handler, the kernel-copy driver) use it. */
static inline void cp_cct_add_sample(struct cp_cct *c, uint32_t leaf, uint32_t metric,
				     uint64_t weight, int n, int status)
{
	struct cp_mf_thread *h = c->hdr;

	cp_cct_node(c, leaf)->metrics[metric] += weight;
	h->samples[metric]++;
	h->frames += (uint64_t)n;
	if (status == 0)
		h->unwind_complete++;
	else if (status == 1)
		h->unwind_partial++;
	else
		h->unwind_failed++;
}
/* Adds a wait of ns on object (enum cp_mf_sync_kind, with its aux word) at leaf to the
 * thread's sync-object table (measure.h), or to its lost counts when the table is full or
 * absent. */
void cp_cct_sync_add(struct cp_cct *c, uint64_t object, uint16_t kind, uint64_t aux, uint32_t leaf,
		     uint64_t ns);
/* Marks the header FINISHED (if finished), trims the file, frees the table and mapping. */
void cp_cct_close(struct cp_cct *c, int finished);
/* Fork child: drop the inherited mapping (it is the parent's file) without writing to it. */
void cp_cct_abandon(struct cp_cct *c);

#endif
