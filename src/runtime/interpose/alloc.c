/* Memory triggers (-e alloc): malloc, calloc, realloc, aligned_alloc, posix_memalign,
 * memalign, valloc, pvalloc and free (C++ operator new/delete call malloc/free).
 *
 * Metrics, by the calling context of the allocation: alloc-bytes (bytes asked for),
 * alloc-calls, leak-bytes (bytes of blocks still live at exit, by allocating context).
 * realloc(p, n) counts as one allocation of n bytes (p, if moved or not, is no longer
 * live); realloc(p, 0) frees.
 *
 * Safety:
 * - Before the next malloc is known (dlsym(RTLD_NEXT) may itself call calloc), the
 *   function pointers point at bootstrap functions that resolve them all; allocations made
 *   while resolving come from a static buffer, and free/realloc recognise its blocks.
 * - Calls from the runtime itself (return address in our text), from a thread the
 *   runtime is busy on, before init and after exit are passed through unrecorded
 *   (cp_sync_record decides).
 * - Live blocks are tracked in a side table keyed by address (never a header in the
 *   block: the program's malloc_usable_size and its own free stay correct), open
 *   addressing in mmap'd memory, lock-free (insert CAS on the key, removal by tombstone).
 *   Entries carry the image epoch: a fork child ignores its parent's entries at exit. */
#include "runtime/core/runtime.h"
#include "runtime/core/sync.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

const int cp_sync_linked_alloc = 1; /* this library interposes -e alloc (core/sync.h) */

/* ---- the next allocator, and the bootstrap ---- */

static void *boot_malloc(size_t n);
static void *boot_calloc(size_t n, size_t size);
static void *boot_realloc(void *p, size_t n);
static void boot_free(void *p);
static void *boot_aligned_alloc(size_t align, size_t n);
static int boot_posix_memalign(void **out, size_t align, size_t n);
static void *boot_memalign(size_t align, size_t n);
static void *boot_valloc(size_t n);
static void *boot_pvalloc(size_t n);

static struct {
	void *(*malloc)(size_t);
	void *(*calloc)(size_t, size_t);
	void *(*realloc)(void *, size_t);
	void (*free)(void *);
	void *(*aligned_alloc)(size_t, size_t);
	int (*posix_memalign)(void **, size_t, size_t);
	void *(*memalign)(size_t, size_t);
	void *(*valloc)(size_t);
	void *(*pvalloc)(size_t);
} real = {boot_malloc,	       boot_calloc,   boot_realloc, boot_free,	 boot_aligned_alloc,
	  boot_posix_memalign, boot_memalign, boot_valloc,  boot_pvalloc};

/* Blocks handed out while resolving: 16-byte aligned, each preceded by its size. */
static _Alignas(64) char boot_buf[65536];
static size_t boot_used;
static __thread int resolving;

static int is_boot(const void *p)
{
	return (uintptr_t)p - (uintptr_t)boot_buf < sizeof boot_buf;
}

static void *boot_take(size_t n, size_t align)
{
	if (align < 16)
		align = 16;
	if (n > sizeof boot_buf || align > 4096)
		return NULL;
	size_t need = (n + 15) & ~(size_t)15;
	size_t old = __atomic_load_n(&boot_used, __ATOMIC_RELAXED), start, end;
	do {
		start = (old + 16 + align - 1) & ~(align - 1); /* room for the size before it */
		end = start + need;
		if (end > sizeof boot_buf)
			return NULL;
	} while (!__atomic_compare_exchange_n(&boot_used, &old, end, 0, __ATOMIC_ACQ_REL,
					      __ATOMIC_RELAXED));
	*(size_t *)(boot_buf + start - 16) = n;
	return boot_buf + start; /* static storage: already zero */
}

static size_t boot_size(const void *p)
{
	return *(const size_t *)((const char *)p - 16);
}

static void *next_sym(const char *name)
{
	return dlsym(RTLD_NEXT, name);
}

static void resolve_all(void)
{
	resolving = 1;
	void *m = next_sym("malloc"), *c = next_sym("calloc"), *r = next_sym("realloc");
	void *f = next_sym("free");
	if (!m || !c || !r || !f) {
		static const char msg[] = "callpath runtime: malloc/free of libc not found\n";
		(void)!write(2, msg, sizeof msg - 1);
		abort();
	}
	void *aa = next_sym("aligned_alloc"), *pm = next_sym("posix_memalign");
	void *ma = next_sym("memalign"), *va = next_sym("valloc"), *pv = next_sym("pvalloc");
	/* Functions a libc may lack keep a fallback through memalign/posix_memalign. */
	__atomic_store_n((void **)&real.malloc, m, __ATOMIC_RELEASE);
	__atomic_store_n((void **)&real.calloc, c, __ATOMIC_RELEASE);
	__atomic_store_n((void **)&real.realloc, r, __ATOMIC_RELEASE);
	__atomic_store_n((void **)&real.free, f, __ATOMIC_RELEASE);
	if (pm)
		__atomic_store_n((void **)&real.posix_memalign, pm, __ATOMIC_RELEASE);
	if (ma)
		__atomic_store_n((void **)&real.memalign, ma, __ATOMIC_RELEASE);
	if (aa)
		__atomic_store_n((void **)&real.aligned_alloc, aa, __ATOMIC_RELEASE);
	if (va)
		__atomic_store_n((void **)&real.valloc, va, __ATOMIC_RELEASE);
	if (pv)
		__atomic_store_n((void **)&real.pvalloc, pv, __ATOMIC_RELEASE);
	resolving = 0;
}

static void *boot_malloc(size_t n)
{
	if (resolving)
		return boot_take(n, 16);
	resolve_all();
	return real.malloc(n);
}

static void *boot_calloc(size_t n, size_t size)
{
	size_t total;
	if (resolving)
		return __builtin_mul_overflow(n, size, &total) ? NULL : boot_take(total, 16);
	resolve_all();
	return real.calloc(n, size);
}

static void *boot_realloc(void *p, size_t n)
{
	if (resolving) {
		void *q = boot_take(n, 16);
		if (q && p)
			memcpy(q, p, boot_size(p) < n ? boot_size(p) : n);
		return q;
	}
	resolve_all();
	return real.realloc(p, n);
}

static void boot_free(void *p)
{
	if (resolving || !p)
		return; /* only bootstrap blocks can exist yet */
	resolve_all();
	real.free(p);
}

static int boot_posix_memalign(void **out, size_t align, size_t n)
{
	if (resolving) {
		*out = boot_take(n, align);
		return *out ? 0 : ENOMEM;
	}
	resolve_all();
	if (real.posix_memalign == boot_posix_memalign)
		return ENOSYS;
	return real.posix_memalign(out, align, n);
}

static void *boot_memalign(size_t align, size_t n)
{
	if (resolving)
		return boot_take(n, align);
	resolve_all();
	if (real.memalign == boot_memalign) {
		void *p = NULL;
		return real.posix_memalign(&p, align < sizeof(void *) ? sizeof(void *) : align, n)
			   ? NULL
			   : p;
	}
	return real.memalign(align, n);
}

static void *boot_aligned_alloc(size_t align, size_t n)
{
	if (resolving)
		return boot_take(n, align);
	resolve_all();
	if (real.aligned_alloc == boot_aligned_alloc)
		return boot_memalign(align, n);
	return real.aligned_alloc(align, n);
}

static void *boot_valloc(size_t n)
{
	if (resolving)
		return boot_take(n, 4096);
	resolve_all();
	if (real.valloc == boot_valloc)
		return boot_memalign(4096, n);
	return real.valloc(n);
}

static void *boot_pvalloc(size_t n)
{
	if (resolving)
		return boot_take((n + 4095) & ~(size_t)4095, 4096);
	resolve_all();
	if (real.pvalloc == boot_pvalloc)
		return boot_memalign(4096, (n + 4095) & ~(size_t)4095);
	return real.pvalloc(n);
}

/* ---- live blocks ---- */

#define LIVE_BITS 21 /* 2M live blocks tracked at most; 64 MiB of address space */
#define LIVE_SLOTS (1u << LIVE_BITS)
#define LIVE_PROBE 512
#define KEY_EMPTY 0
#define KEY_TOMB 1

struct live {
	uint64_t key; /* block address, KEY_EMPTY or KEY_TOMB */
	uint64_t size;
	uint32_t node, tidx;
	uint32_t epoch; /* complete entry of this image when == live_epoch (0: being written) */
	uint32_t pad;
};

static struct live *live;
static uint32_t live_epoch = 1;
static uint64_t untracked_blocks, untracked_bytes; /* table full around their slot */
static uint64_t orphan_bytes, orphan_blocks;	   /* owner thread ended before exit */
static uint64_t leak_bytes, leak_blocks;

static inline uint32_t live_hash(uint64_t p)
{
	return (uint32_t)((p * 0x9e3779b97f4a7c15ull) >> (64 - LIVE_BITS));
}

void cp_alloc_start(void)
{
	if (live)
		return;
	void *p = mmap(NULL, (size_t)LIVE_SLOTS * sizeof(struct live), PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED) {
		cp_rt_note(
		    "alloc: no memory for the table of live blocks; leak-bytes not measured");
		return;
	}
	live = p;
}

void cp_alloc_fork_child(void)
{
	/* The parent's entries name its threads' nodes: not ours to attribute. */
	live_epoch++;
	untracked_blocks = untracked_bytes = 0;
}

static void live_insert(uint64_t p, uint64_t size, const struct cp_sync_where *w)
{
	struct live *tab = live;
	if (!tab)
		return;
	uint32_t h = live_hash(p);
	for (uint32_t i = 0; i < LIVE_PROBE; i++) {
		struct live *s = &tab[(h + i) & (LIVE_SLOTS - 1)];
		uint64_t k = __atomic_load_n(&s->key, __ATOMIC_RELAXED);
		if (k > KEY_TOMB)
			continue;
		if (!__atomic_compare_exchange_n(&s->key, &k, p, 0, __ATOMIC_ACQ_REL,
						 __ATOMIC_RELAXED))
			continue;
		__atomic_store_n(&s->epoch, 0, __ATOMIC_RELAXED);
		s->size = size;
		s->node = w->node;
		s->tidx = w->tidx;
		__atomic_store_n(&s->epoch, live_epoch, __ATOMIC_RELEASE);
		return;
	}
	__atomic_add_fetch(&untracked_blocks, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&untracked_bytes, size, __ATOMIC_RELAXED);
}

/* Removes p's entry; 1 and its contents in *out (when out) if there was one. */
static int live_remove(uint64_t p, struct live *out)
{
	struct live *tab = live;
	if (!tab)
		return 0;
	uint32_t h = live_hash(p);
	for (uint32_t i = 0; i < LIVE_PROBE; i++) {
		struct live *s = &tab[(h + i) & (LIVE_SLOTS - 1)];
		uint64_t k = __atomic_load_n(&s->key, __ATOMIC_ACQUIRE);
		if (k == KEY_EMPTY)
			return 0;
		if (k == p) {
			if (out)
				*out = *s;
			__atomic_store_n(&s->key, KEY_TOMB, __ATOMIC_RELEASE);
			return 1;
		}
	}
	return 0;
}

/* Exit (threads_lock held, recording off): each live block's bytes go to leak-bytes of
 * its allocating context, in that thread's file if the thread is still registered. */
void cp_alloc_attribute_leaks(void)
{
	if (!live)
		return;
	uint32_t ntidx = __atomic_load_n(&cp_rt.next_tidx, __ATOMIC_ACQUIRE);
	size_t map_bytes = ((size_t)ntidx * sizeof(struct cp_thread *) + 4095) & ~(size_t)4095;
	struct cp_thread **by_tidx = NULL;
	if (map_bytes) {
		void *m = mmap(NULL, map_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			       -1, 0);
		if (m == MAP_FAILED)
			return;
		by_tidx = m;
	}
	for (uint32_t i = 0; i < CP_MAX_THREADS; i++) {
		struct cp_thread *t = __atomic_load_n(&cp_rt.threads[i], __ATOMIC_ACQUIRE);
		if (t && t->tidx < ntidx && t->cct.hdr)
			by_tidx[t->tidx] = t;
	}
	uint32_t metric = cp_sync_metric[CP_SM_LEAK_BYTES];
	for (uint32_t i = 0; i < LIVE_SLOTS; i++) {
		struct live *s = &live[i];
		if (__atomic_load_n(&s->key, __ATOMIC_ACQUIRE) <= KEY_TOMB ||
		    __atomic_load_n(&s->epoch, __ATOMIC_ACQUIRE) != live_epoch)
			continue;
		struct cp_thread *t = s->tidx < ntidx ? by_tidx[s->tidx] : NULL;
		if (!t || s->node >= t->cct.nnodes) {
			orphan_blocks++;
			orphan_bytes += s->size;
			continue;
		}
		struct cp_mf_node *n = cp_cct_node(&t->cct, s->node);
		__atomic_add_fetch(&n->metrics[metric], s->size, __ATOMIC_RELAXED);
		__atomic_add_fetch(&t->cct.hdr->samples[metric], 1, __ATOMIC_RELAXED);
		leak_blocks++;
		leak_bytes += s->size;
	}
	if (by_tidx)
		munmap(by_tidx, map_bytes);
}

void cp_alloc_notes(void)
{
	if (orphan_blocks)
		cp_rt_note("alloc: %llu byte(s) in %llu block(s) live at exit were allocated by "
			   "threads that had already ended; not in leak-bytes",
			   (unsigned long long)orphan_bytes, (unsigned long long)orphan_blocks);
	if (untracked_blocks)
		cp_rt_note("alloc: %llu block(s) (%llu bytes) were not tracked for leak-bytes (the "
			   "table of live blocks was full around them)",
			   (unsigned long long)untracked_blocks,
			   (unsigned long long)untracked_bytes);
}

/* ---- recording ---- */

static const enum cp_sync_id alloc_ids[2] = {CP_SM_ALLOC_BYTES, CP_SM_ALLOC_CALLS};

/* An allocation of n bytes at p made by the call returning to ra. */
static inline __attribute__((always_inline)) void alloc_record(const void *ra, const void *cfa,
							       const void *fp, void *p, size_t n)
{
	int saved = errno;
	uint64_t values[2] = {n, 1};
	struct cp_sync_where w;
	if (cp_sync_record_ids(ra, cfa, fp, alloc_ids, values, 2, &w))
		live_insert((uintptr_t)p, n, &w);
	errno = saved;
}

#define ALLOC_ON() CP_SYNC_ENABLED(CP_SYNC_ALLOC)

CP_EXPORT void *malloc(size_t n)
{
	if (!ALLOC_ON()) /* a tail call */
		return real.malloc(n);
	void *p = real.malloc(n);
	if (p)
		alloc_record(CP_SYNC_SITE(), p, n);
	return p;
}

CP_EXPORT void *calloc(size_t n, size_t size)
{
	if (!ALLOC_ON())
		return real.calloc(n, size);
	void *p = real.calloc(n, size);
	if (p)
		alloc_record(CP_SYNC_SITE(), p, n * size);
	return p;
}

CP_EXPORT void free(void *p)
{
	if (is_boot(p))
		return;
	if (ALLOC_ON() && p)
		live_remove((uintptr_t)p, NULL);
	real.free(p);
}

CP_EXPORT void *realloc(void *p, size_t n)
{
	if (is_boot(p)) { /* a bootstrap block moves to the real heap */
		void *q = real.malloc(n ? n : 1);
		if (q)
			memcpy(q, p, boot_size(p) < n ? boot_size(p) : n);
		return q;
	}
	if (!ALLOC_ON())
		return real.realloc(p, n);
	/* p leaves the table before the call: once realloc has freed it, another thread may
	 * get the same address and insert it. Back in if the call fails. */
	struct live old;
	int had = p && live_remove((uintptr_t)p, &old);
	void *q = real.realloc(p, n);
	if (had && !q && n) {
		struct cp_sync_where w = {old.node, old.tidx};
		if (old.epoch == live_epoch)
			live_insert((uintptr_t)p, old.size, &w);
	}
	if (q && n)
		alloc_record(CP_SYNC_SITE(), q, n);
	return q;
}

CP_EXPORT void *aligned_alloc(size_t align, size_t n)
{
	void *p = real.aligned_alloc(align, n);
	if (ALLOC_ON() && p)
		alloc_record(CP_SYNC_SITE(), p, n);
	return p;
}

CP_EXPORT int posix_memalign(void **out, size_t align, size_t n)
{
	int rc = real.posix_memalign(out, align, n);
	if (ALLOC_ON() && !rc && *out)
		alloc_record(CP_SYNC_SITE(), *out, n);
	return rc;
}

CP_EXPORT void *memalign(size_t align, size_t n)
{
	void *p = real.memalign(align, n);
	if (ALLOC_ON() && p)
		alloc_record(CP_SYNC_SITE(), p, n);
	return p;
}

CP_EXPORT void *valloc(size_t n)
{
	void *p = real.valloc(n);
	if (ALLOC_ON() && p)
		alloc_record(CP_SYNC_SITE(), p, n);
	return p;
}

CP_EXPORT void *pvalloc(size_t n)
{
	void *p = real.pvalloc(n);
	if (ALLOC_ON() && p)
		alloc_record(CP_SYNC_SITE(), p, n);
	return p;
}
