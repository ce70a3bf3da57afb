/* Synchronous samples (see sync.h): the trigger families' metrics, and the primitive that
 * attributes a value to the calling context of an interposed call. */
#include "runtime/core/sync.h"
#include "runtime/core/runtime.h"
#include "runtime/unwind/cfi.h"
#include "runtime/unwind/modules.h"
#include "runtime/unwind/unwind-internal.h"
#include "runtime/unwind/unwind.h"

#include <errno.h>
#include <sys/mman.h>

#include "base/sigsafe/sigsafe.h"

volatile uint32_t cp_sync_on;
uint32_t cp_sync_metric[CP_SM_COUNT];

static uint32_t sync_requested;	    /* families asked for by CALLPATH_EVENTS */
static uintptr_t self_lo, self_len; /* the runtime's own text */
static uint64_t skipped_busy;	    /* events on a busy thread: not attributed */
/* One page that the kernel zeroes in every fork child (MADV_WIPEONFORK): a child made
 * without our fork handlers (libc-internal _Fork) shares our files' mappings and must not
 * write into them. Our fork handler sets `live` again in the child. */
struct sync_guard {
	volatile int live;
};
static struct sync_guard *guard;

/* ---- the families' metrics ---- */

static int sync_process_init(struct cp_metric *m)
{
	m->mechanism = CP_MF_MECH_INTERPOSE;
	return 0;
}

static int sync_thread_start(struct cp_metric *m, struct cp_source_thread *st, pid_t tid)
{
	(void)m, (void)st, (void)tid;
	return 0;
}

static void sync_thread_stop(struct cp_metric *m, struct cp_source_thread *st)
{
	(void)m, (void)st;
}

static int sync_claims(struct cp_metric *m, struct cp_source_thread *st, const siginfo_t *si,
		       uint64_t *weight)
{
	(void)m, (void)st, (void)si, (void)weight;
	return 0; /* never a signal */
}

#define SYNC_SOURCE(metric_name, metric_unit)                                                      \
	{                                                                                          \
		.name = metric_name, .unit = metric_unit, .source = CP_MF_SRC_SYNC,                \
		.process_init = sync_process_init, .thread_start = sync_thread_start,              \
		.thread_stop = sync_thread_stop, .claims = sync_claims,                            \
	}

static const struct cp_sample_source sync_sources[CP_SM_COUNT] = {
    [CP_SM_ALLOC_BYTES] = SYNC_SOURCE("alloc-bytes", "bytes"),
    [CP_SM_ALLOC_CALLS] = SYNC_SOURCE("alloc-calls", "calls"),
    [CP_SM_LEAK_BYTES] = SYNC_SOURCE("leak-bytes", "bytes"),
    [CP_SM_IO_READ_BYTES] = SYNC_SOURCE("io-read-bytes", "bytes"),
    [CP_SM_IO_WRITE_BYTES] = SYNC_SOURCE("io-write-bytes", "bytes"),
    [CP_SM_IO_TIME] = SYNC_SOURCE("io-time", "ns"),
    [CP_SM_IO_CALLS] = SYNC_SOURCE("io-calls", "calls"),
    [CP_SM_WAIT_TIME] = SYNC_SOURCE("wait-time", "ns"),
    [CP_SM_WAIT_CALLS] = SYNC_SOURCE("wait-calls", "calls"),
};

static const struct sync_family {
	const char *name;
	uint32_t bit;
	enum cp_sync_id first, last;
} families[] = {
    {"alloc", CP_SYNC_ALLOC, CP_SM_ALLOC_BYTES, CP_SM_LEAK_BYTES},
    {"io", CP_SYNC_IO, CP_SM_IO_READ_BYTES, CP_SM_IO_CALLS},
    {"wait", CP_SYNC_WAIT, CP_SM_WAIT_TIME, CP_SM_WAIT_CALLS},
};

static const struct sync_family *family_find(const char *name, size_t len)
{
	for (size_t i = 0; i < sizeof families / sizeof families[0]; i++)
		if (cp_ss_strlen(families[i].name) == len &&
		    !cp_ss_strncmp(families[i].name, name, len))
			return &families[i];
	return NULL;
}

int cp_sync_is_family(const char *name, size_t len)
{
	return family_find(name, len) != NULL;
}

int cp_sync_config_family(const char *name, size_t len, int has_period)
{
	const struct sync_family *f = family_find(name, len);
	if (!f)
		return 0;
	if (has_period)
		return -1;
	if (sync_requested & f->bit) /* named twice: once is enough */
		return 1;
	if (cp_rt.nmetrics + (f->last - f->first + 1) > CP_MF_MAX_METRICS)
		return -1;
	for (int id = f->first; id <= (int)f->last; id++) {
		struct cp_metric *m = &cp_rt.metrics[cp_rt.nmetrics];
		m->src = &sync_sources[id];
		m->index = cp_rt.nmetrics;
		m->period = 0;
		cp_sync_metric[id] = cp_rt.nmetrics++;
	}
	sync_requested |= f->bit;
	return 1;
}

/* ---- lifecycle ---- */

void cp_sync_start(void)
{
	if (!sync_requested || !cp_rt.active)
		return;
	const struct cp_module *m = cp_modules_find((uintptr_t)cp_sync_record_at);
	if (m) {
		self_lo = m->text_lo;
		self_len = m->text_hi - m->text_lo;
	}
	if (!guard) {
		void *p =
		    mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED) {
			cp_rt_note("synchronous triggers disabled: no memory for their state");
			return;
		}
		/* Without WIPEONFORK (kernels before 4.14) a child forked inside libc would write
		 * into our files: such a child is rare (daemon() runs our handlers). */
		(void)madvise(p, 4096, MADV_WIPEONFORK);
		guard = p;
	}
	guard->live = 1;
	if ((sync_requested & CP_SYNC_ALLOC) && cp_alloc_start)
		cp_alloc_start();
	__atomic_store_n(&cp_sync_on, sync_requested, __ATOMIC_RELEASE);
}

void cp_sync_after_fork_child(void)
{
	if (!guard || !sync_requested)
		return;
	skipped_busy = 0;
	if (cp_alloc_fork_child)
		cp_alloc_fork_child();
	guard->live = 1;
	__atomic_store_n(&cp_sync_on, sync_requested, __ATOMIC_RELEASE);
}

void cp_sync_fini(int crashed)
{
	uint32_t was = __atomic_exchange_n(&cp_sync_on, 0, __ATOMIC_ACQ_REL);
	if (crashed || !was)
		return;
	if ((was & CP_SYNC_ALLOC) && cp_alloc_attribute_leaks)
		cp_alloc_attribute_leaks();
}

void cp_sync_notes(void)
{
	if (!sync_requested)
		return;
	if (skipped_busy)
		cp_rt_note(
		    "%llu synchronous event(s) (allocation, I/O, wait) happened while the "
		    "runtime was busy on their thread (loading a library, starting a thread, "
		    "or inside a signal handler) and were not attributed",
		    (unsigned long long)skipped_busy);
	if ((sync_requested & CP_SYNC_ALLOC) && cp_alloc_notes)
		cp_alloc_notes();
}

/* ---- the primitive ---- */

static int is_trampoline(uintptr_t pc)
{
	for (unsigned i = 0; i < 2; i++)
		if (pc > cp_trampolines[i] && pc - cp_trampolines[i] <= CP_TRAMPOLINE_MAX)
			return 1;
	return 0;
}

/* The node of one frame under parent, as the sampling handler maps it (core/signal.c). */
static uint32_t frame_node(struct cp_thread *t, uint32_t parent, const struct cp_frame *f)
{
	uintptr_t pc = f->pc;
	const struct cp_module *m = cp_modules_find(f->kind == CP_FRAME_RETURN ? pc - 1 : pc);
	uint32_t id = m ? m->id : CP_MF_MODULE_NONE;
	uint64_t off = m ? pc - m->bias : pc;
	uint16_t kind = f->kind == CP_FRAME_SIGNAL ? CP_MF_NODE_SIGNAL
			: f->kind == CP_FRAME_PC   ? CP_MF_NODE_PC
						   : CP_MF_NODE_CALL;
	return cp_cct_child(&t->cct, parent, kind, id, off);
}

/* frames[0..n) leaf first -> leaf node, through the thread's synchronous path cache (the
 * same scheme as the sampling handler's, kept apart so that samples and calls interleaving
 * do not evict each other's prefix). */
static uint32_t path_insert(struct cp_thread *t, const struct cp_frame *frames, int n,
			    enum cp_unwind_status status)
{
	struct cp_path_cache *pc = &t->sync_path;
	uint32_t node = 0;
	if (status != CP_UNWIND_COMPLETE)
		node = cp_cct_child(&t->cct, 0, CP_MF_NODE_PARTIAL, CP_MF_MODULE_NONE, 0);
	uint32_t j = 0, reuse = 0;
	if (pc->root == node && pc->modules_gen == cp_rt.modules_gen)
		reuse = pc->n;
	pc->root = node;
	pc->modules_gen = cp_rt.modules_gen;
	for (int i = n - 1; i >= 0 && node != CP_CCT_NONE; i--, j++) {
		const struct cp_frame *f = &frames[i];
		if (j < reuse && pc->pc[j] == f->pc && pc->kind[j] == f->kind) {
			node = pc->node[j];
			continue;
		}
		reuse = 0;
		if (!(f->kind == CP_FRAME_RETURN && is_trampoline(f->pc)))
			node = frame_node(t, node, f);
		pc->pc[j] = f->pc;
		pc->kind[j] = (uint8_t)f->kind;
		pc->node[j] = node;
	}
	pc->n = node == CP_CCT_NONE ? 0 : j;
	return node;
}

/* ---- the context cache (see sync.h) ---- */

static inline struct cp_sync_cache_entry *cache_slot(struct cp_thread *t, uintptr_t ra,
						     uintptr_t cfa)
{
	uint64_t h = (ra ^ (cfa * 0x9e3779b97f4a7c15ull)) * 0xbf58476d1ce4e5b9ull;
	return &t->sync_cache.e[h >> 58]; /* 64 ways */
}

/* The cached leaf for (ra, cfa) if every recorded slot still holds its return address. */
static inline uint32_t cache_lookup(struct cp_thread *t, uintptr_t ra, uintptr_t cfa)
{
	struct cp_sync_cache_entry *e = cache_slot(t, ra, cfa);
	if (e->state != 2 || e->ra != ra || e->cfa != cfa || e->modules_gen != cp_rt.modules_gen)
		return CP_CCT_NONE;
	for (uint32_t i = 0; i < e->nslots; i++)
		if (*(const uintptr_t *)(cfa + e->off[i]) != e->val[i])
			return CP_CCT_NONE;
	return e->leaf;
}

/* After a full unwind (frames[0] is the call site, frames[n-1] the outermost frame):
 * records an entry if the path qualifies, at the second miss of the key. */
static void cache_fill(struct cp_thread *t, uintptr_t ra, uintptr_t cfa,
		       const struct cp_frame *frames, int n, uint32_t leaf)
{
	struct cp_sync_cache_entry *e = cache_slot(t, ra, cfa);
	if (e->state == 0 || e->ra != ra || e->cfa != cfa) { /* first miss: remember the key */
		e->ra = ra;
		e->cfa = cfa;
		e->state = 1;
		return;
	}
	e->state = 1;
	struct uw_thread *ut = uw_thread_self();
	if (n < 1 || n - 1 > CP_SYNC_CACHE_FRAMES || !ut->inited || cfa < ut->stack_lo ||
	    cfa >= ut->stack_hi)
		return;
	uintptr_t sp = cfa;
	for (int i = 0; i < n; i++) {
		uintptr_t pc = frames[i].pc;
		const struct cp_module *m = cp_modules_find(pc - 1);
		struct cp_cfi_row row;
		if (frames[i].kind != CP_FRAME_RETURN || !m || cp_cfi_find_row(m, pc - 1, &row) < 0)
			return;
		if (row.kind == CP_ROW_OUTERMOST && i == n - 1)
			break;
		if (row.kind != CP_ROW_NORMAL || row.cfa_how != CP_CFA_REG ||
		    row.cfa_reg != CP_DW_RSP || row.ra_how != CP_REG_CFA || row.cfa_off < 8 ||
		    i == n - 1)
			return;
		uintptr_t slot =
		    sp + (uintptr_t)(intptr_t)row.cfa_off + (uintptr_t)(intptr_t)row.ra_off;
		if (slot < cfa || slot + 8 > ut->stack_hi || slot - cfa > UINT32_MAX ||
		    *(const uintptr_t *)slot != frames[i + 1].pc)
			return; /* not the unwinder's path: leave it uncached */
		e->off[i] = (uint32_t)(slot - cfa);
		e->val[i] = frames[i + 1].pc;
		sp += (uintptr_t)(intptr_t)row.cfa_off;
	}
	e->nslots = (uint16_t)(n - 1);
	e->leaf = leaf;
	e->modules_gen = cp_rt.modules_gen;
	e->state = 2;
}

/* The unwind from here, cut at the program's call site `ra`; through the context cache
 * when cfa is known. */
static uint32_t sync_leaf(struct cp_thread *t, uintptr_t ra, uintptr_t cfa)
{
	struct cp_mf_thread *h = t->cct.hdr;
	if (cfa) {
		uint32_t leaf = cache_lookup(t, ra, cfa);
		if (leaf != CP_CCT_NONE) {
			t->sync_cache.hits++;
			h->unwind_complete++;
			h->frames += (uint64_t)cache_slot(t, ra, cfa)->nslots + 1;
			return leaf;
		}
		t->sync_cache.misses++;
	}
	struct cp_frame *frames = t->sync_frames;
	enum cp_unwind_status status = CP_UNWIND_FAILED;
	int n = cp_unwind_here(frames, CP_MAX_FRAMES, &status);
	int k = 0;
	while (k < n && !(frames[k].pc == ra && frames[k].kind == CP_FRAME_RETURN))
		k++;
	if (k == n) { /* our own frames could not be unwound: the call site alone */
		frames[0].pc = ra;
		frames[0].kind = CP_FRAME_RETURN;
		k = 0;
		n = 1;
		status = CP_UNWIND_FAILED;
	}
	if (status == CP_UNWIND_COMPLETE)
		h->unwind_complete++;
	else if (status == CP_UNWIND_PARTIAL && n - k > 1)
		h->unwind_partial++;
	else
		h->unwind_failed++;
	h->frames += (uint64_t)(n - k);
	uint32_t leaf = path_insert(t, frames + k, n - k, status);
	if (cfa && leaf != CP_CCT_NONE && status == CP_UNWIND_COMPLETE &&
	    *(const uintptr_t *)(cfa - 8) == ra)
		cache_fill(t, ra, cfa, frames + k, n - k, leaf);
	return leaf;
}

__attribute__((noinline)) int cp_sync_record_at(const void *ra, const void *cfa,
						const struct cp_sync_value *v, unsigned n,
						struct cp_sync_where *where)
{
	struct cp_thread *t = cp_self;
	uintptr_t r = (uintptr_t)ra;
	if (!t || !cp_rt.enabled || r - self_lo < self_len || !guard || !guard->live)
		return 0;
	/* With adopted threads about, cp_self may be another thread's (shared TLS). */
	if (__atomic_load_n(&cp_rt.nadopted, __ATOMIC_ACQUIRE) && t->tid != cp_ss_gettid())
		return 0;
	if (t->busy || t->stopped) {
		if (t->busy)
			__atomic_add_fetch(&skipped_busy, 1, __ATOMIC_RELAXED);
		return 0;
	}
	t->busy = 1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	uint32_t leaf = sync_leaf(t, r, (uintptr_t)cfa);
	int ok = leaf != CP_CCT_NONE;
	if (ok) {
		struct cp_mf_node *node = cp_cct_node(&t->cct, leaf);
		for (unsigned i = 0; i < n; i++) {
			node->metrics[v[i].metric] += v[i].value;
			t->cct.hdr->samples[v[i].metric]++;
		}
		if (where) {
			where->node = leaf;
			where->tidx = t->tidx;
		}
	} else {
		t->cct.hdr->dropped++;
		cp_rt_fail("a thread's calling-context tree could not grow (disk full?)");
	}
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	t->busy = 0;
	return ok;
}

static const enum cp_sync_id wait_ids[2] = {CP_SM_WAIT_TIME, CP_SM_WAIT_CALLS};

void cp_wait_record(const void *ra, uint64_t t0)
{
	int saved = errno;
	uint64_t values[2] = {cp_sync_now_ns() - t0, 1};
	cp_sync_record_ids(ra, NULL, wait_ids, values, 2, NULL);
	errno = saved;
}
