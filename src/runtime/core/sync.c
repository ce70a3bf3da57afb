/* Synchronous samples (see sync.h), the signal-time half: the primitive that attributes a
 * value to the calling context of an interposed call (the wrappers run it wherever the
 * program calls them, signal handlers included), its context cache, and the families'
 * metric sources (their claims run in the sample handler). The configuration and the
 * lifecycle are in sync-init.c. */
#include "runtime/core/sync-internal.h"
#include "runtime/omp/omp.h"
#include "runtime/unwind/cfi.h"
#include "runtime/unwind/modules.h"
#include "runtime/unwind/unwind.h"

#include <errno.h>

#include "base/sigsafe/sigsafe.h"
#include "base/sigsafe/banned.h"

volatile uint32_t cp_sync_on;
uint32_t cp_sync_metric[CP_SM_COUNT];

uint64_t cp_sync_skipped_busy;
struct cp_sync_guard *cp_sync_guard;

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

const struct cp_sample_source cp_sync_sources[CP_SM_COUNT] = {
    [CP_SM_ALLOC_BYTES] = SYNC_SOURCE("alloc-bytes", "bytes"),
    [CP_SM_ALLOC_CALLS] = SYNC_SOURCE("alloc-calls", "calls"),
    [CP_SM_LEAK_BYTES] = SYNC_SOURCE("leak-bytes", "bytes"),
    [CP_SM_IO_READ_BYTES] = SYNC_SOURCE("io-read-bytes", "bytes"),
    [CP_SM_IO_WRITE_BYTES] = SYNC_SOURCE("io-write-bytes", "bytes"),
    [CP_SM_IO_TIME] = SYNC_SOURCE("io-time", "ns"),
    [CP_SM_IO_CALLS] = SYNC_SOURCE("io-calls", "calls"),
    [CP_SM_WAIT_TIME] = SYNC_SOURCE("wait-time", "ns"),
    [CP_SM_WAIT_CALLS] = SYNC_SOURCE("wait-calls", "calls"),
    [CP_SM_MPI_TIME] = SYNC_SOURCE("mpi-time", "ns"),
    [CP_SM_MPI_CALLS] = SYNC_SOURCE("mpi-calls", "calls"),
    [CP_SM_MPI_SENT_BYTES] = SYNC_SOURCE("mpi-sent-bytes", "bytes"),
    [CP_SM_MPI_RECV_BYTES] = SYNC_SOURCE("mpi-recv-bytes", "bytes"),
    [CP_SM_MPI_SENT_MSGS] = SYNC_SOURCE("mpi-sent-msgs", "calls"),
    [CP_SM_MPI_RECV_MSGS] = SYNC_SOURCE("mpi-recv-msgs", "calls"),
};

/* ---- the primitive ---- */

/* ---- the context cache (see sync.h) ---- */

static inline struct cp_sync_cache_entry *cache_slot(struct cp_thread *t, uintptr_t ra,
						     uintptr_t cfa, uintptr_t fp)
{
	uint64_t h = (ra ^ (cfa * 0x9e3779b97f4a7c15ull) ^ (fp * 0xc2b2ae3d27d4eb4full)) *
		     0xbf58476d1ce4e5b9ull;
	return &t->sync_cache.e[h >> 58]; /* 64 ways */
}

/* The cached entry for the key if every recorded slot still holds its value. */
static inline struct cp_sync_cache_entry *cache_lookup(struct cp_thread *t, uintptr_t ra,
						       uintptr_t cfa, uintptr_t fp)
{
	struct cp_sync_cache_entry *e = cache_slot(t, ra, cfa, fp);
	if (e->state != 2 || e->ra != ra || e->cfa != cfa || e->fp != fp ||
	    e->modules_gen != cp_rt.modules_gen)
		return NULL;
	for (uint32_t i = 0; i < e->nslots; i++)
		if (*(const uintptr_t *)(cfa + e->off[i]) != e->val[i])
			return NULL;
	return e;
}

/* Adds a validated slot; 0, or -1 if it is not a stack word above cfa or there is no room. */
static int cache_slot_add(struct cp_sync_cache_entry *e, uintptr_t stack_hi, uintptr_t cfa,
			  uintptr_t slot, uintptr_t *value)
{
	if (slot < cfa || slot + 8 > stack_hi || slot - cfa > UINT32_MAX ||
	    e->nslots >= CP_SYNC_CACHE_FRAMES)
		return -1;
	*value = *(const uintptr_t *)slot;
	e->off[e->nslots] = (uint32_t)(slot - cfa);
	e->val[e->nslots++] = *value;
	return 0;
}

/* Walks frames[0..n) (the call site first, the outermost frame last) by the CFI rules
 * alone from (cfa, fp), recording the slots read; 0 if it reproduces them exactly. */
static int cache_walk(struct cp_sync_cache_entry *e, uintptr_t stack_hi, uintptr_t cfa,
		      uintptr_t fp, const struct cp_frame *frames, int n)
{
	uintptr_t sp = cfa, rbp = fp;
	int rbp_known = 1;
	for (int i = 0; i < n; i++) {
		uintptr_t pc = frames[i].pc, at, value;
		const struct cp_module *m = cp_modules_find(pc - 1);
		struct cp_cfi_row row;
		if (frames[i].kind != CP_FRAME_RETURN || !m || cp_cfi_find_row(m, pc - 1, &row) < 0)
			return -1;
		if (row.kind == CP_ROW_OUTERMOST)
			return i == n - 1 ? 0 : -1;
		if (row.kind != CP_ROW_NORMAL || row.cfa_how != CP_CFA_REG ||
		    row.ra_how != CP_REG_CFA || i == n - 1)
			return -1;
		uintptr_t new_cfa;
		if (row.cfa_reg == CP_DW_RSP)
			new_cfa = sp + (uintptr_t)(intptr_t)row.cfa_off;
		else if (row.cfa_reg == CP_DW_RBP && rbp_known)
			new_cfa = rbp + (uintptr_t)(intptr_t)row.cfa_off;
		else
			return -1;
		if (new_cfa <= sp)
			return -1;
		at = new_cfa + (uintptr_t)(intptr_t)row.ra_off;
		if (cache_slot_add(e, stack_hi, cfa, at, &value) || value != frames[i + 1].pc)
			return -1; /* not the unwinder's path: leave it uncached */
		/* rbp in the caller: restored from its save slot, unless already popped. */
		if (row.saved_how[1] == CP_REG_CFA) {
			at = new_cfa + (uintptr_t)(intptr_t)row.saved_off[1];
			if (at >= sp) {
				if (cache_slot_add(e, stack_hi, cfa, at, &value))
					return -1;
				rbp = value;
			}
		} else if (row.saved_how[1] != CP_REG_SAME) {
			rbp_known = 0;
		}
		sp = new_cfa;
	}
	return -1;
}

/* After a full, complete unwind (frames[0] is the call site, frames[n-1] the outermost
 * frame): makes an entry at the second miss of the key, if the path qualifies. */
static void cache_fill(struct cp_thread *t, uintptr_t ra, uintptr_t cfa, uintptr_t fp,
		       const struct cp_frame *frames, int n, uint32_t leaf)
{
	struct cp_sync_cache_entry *e = cache_slot(t, ra, cfa, fp);
	if (e->state == 0 || e->ra != ra || e->cfa != cfa || e->fp != fp) {
		e->ra = ra; /* first miss: remember the key */
		e->cfa = cfa;
		e->fp = fp;
		e->state = 1;
		return;
	}
	uintptr_t stack_lo, stack_hi;
	e->state = 1;
	e->nslots = 0;
	if (cp_unwind_stack(&stack_lo, &stack_hi) || cfa < stack_lo || cfa >= stack_hi ||
	    cache_walk(e, stack_hi, cfa, fp, frames, n))
		return;
	e->nframes = (uint16_t)n;
	e->leaf = leaf;
	e->modules_gen = cp_rt.modules_gen;
	e->state = 2;
}

/* The unwind from here, cut at the program's call site `ra`; through the context cache
 * when cfa is known. */
static uint32_t sync_leaf(struct cp_thread *t, uintptr_t ra, uintptr_t cfa, uintptr_t fp)
{
	struct cp_mf_thread *h = t->cct.hdr;
	if (cfa) {
		const struct cp_sync_cache_entry *e = cache_lookup(t, ra, cfa, fp);
		if (e) {
			t->sync_cache.hits++;
			h->unwind_complete++;
			h->frames += e->nframes;
			return e->leaf;
		}
		t->sync_cache.misses++;
	}
	struct cp_frame *frames = t->sync_frames;
	enum cp_unwind_status status = CP_UNWIND_FAILED;
	int n = cp_unwind_here(frames, CP_MAX_FRAMES, &status);
	/* A call site in a relocated copy (loop probes) is among the frames at its original
	 * place. */
	uintptr_t site = cp_unwind_map_return(ra);
	int k = 0;
	while (k < n && !(frames[k].pc == site && frames[k].kind == CP_FRAME_RETURN))
		k++;
	if (k == n) { /* our own frames could not be unwound: the call site alone */
		frames[0].pc = site;
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
	/* In an OpenMP region the path also depends on the region (a pool thread runs
	 * regions of other contexts on the same stack): spliced, never cached. */
	int in_region = t->omp_cur != NULL;
	n = k + cp_omp_splice(t, frames + k, n - k, CP_MAX_FRAMES - k, &status);
	uint32_t leaf = cp_path_insert(t, &t->sync_path, frames + k, n - k, status);
	if (cfa && !in_region && leaf != CP_CCT_NONE && status == CP_UNWIND_COMPLETE &&
	    *(const uintptr_t *)(cfa - 8) == ra)
		cache_fill(t, ra, cfa, fp, frames + k, n - k, leaf);
	return leaf;
}

/* The called function's node below the call site's leaf (cp_sync_record_callee). */
static uint32_t callee_node(struct cp_thread *t, uint32_t leaf, uintptr_t callee)
{
	const struct cp_module *m = cp_modules_find(callee);
	if (!m)
		return cp_cct_child(&t->cct, leaf, CP_MF_NODE_PC, CP_MF_MODULE_NONE, callee);
	return cp_cct_child(&t->cct, leaf, CP_MF_NODE_PC, m->id, callee - m->bias);
}

static __attribute__((always_inline)) inline int
sync_record(const void *ra, const void *cfa, const void *caller_fp, uintptr_t callee,
	    const struct cp_sync_value *v, unsigned n, struct cp_sync_where *where,
	    const struct cp_sync_object *obj)
{
	struct cp_thread *t = cp_self;
	uintptr_t r = (uintptr_t)ra;
	if (!t || !cp_rt.enabled || cp_rt_owns_pc(r, 0) || !cp_sync_guard || !cp_sync_guard->live)
		return 0;
	/* With adopted threads about, cp_self may be another thread's (shared TLS). */
	if (__atomic_load_n(&cp_rt.nadopted, __ATOMIC_ACQUIRE) && t->tid != cp_ss_gettid())
		return 0;
	if (t->busy || t->stopped) {
		if (t->busy)
			__atomic_add_fetch(&cp_sync_skipped_busy, 1, __ATOMIC_RELAXED);
		return 0;
	}
	t->busy = 1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	uint32_t leaf = sync_leaf(t, r, (uintptr_t)cfa, (uintptr_t)caller_fp), site = leaf;
	if (callee && leaf != CP_CCT_NONE)
		leaf = callee_node(t, leaf, callee);
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
		if (obj)
			cp_cct_sync_add(&t->cct, obj->object, obj->kind, obj->aux, site, obj->ns);
	} else {
		t->cct.hdr->dropped++;
		cp_rt_fail("a thread's calling-context tree could not grow (disk full?)");
	}
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	t->busy = 0;
	return ok;
}

__attribute__((noinline)) int cp_sync_record_at(const void *ra, const void *cfa,
						const void *caller_fp,
						const struct cp_sync_value *v, unsigned n,
						struct cp_sync_where *where)
{
	return sync_record(ra, cfa, caller_fp, 0, v, n, where, NULL);
}

__attribute__((noinline)) int cp_sync_record_callee(const void *ra, const void *cfa,
						    const void *caller_fp, uintptr_t callee,
						    const struct cp_sync_value *v, unsigned n,
						    const struct cp_sync_object *obj)
{
	return sync_record(ra, cfa, caller_fp, callee, v, n, NULL, obj);
}

void cp_wait_record(const void *ra, uint64_t t0, const void *object, unsigned kind)
{
	int saved = errno;
	struct cp_sync_value v[2] = {
	    {cp_sync_metric[CP_SM_WAIT_TIME], cp_sync_now_ns() - t0},
	    {cp_sync_metric[CP_SM_WAIT_CALLS], 1},
	};
	struct cp_sync_object obj = {(uintptr_t)object, 0, v[0].value, (uint16_t)kind};
	sync_record(ra, NULL, NULL, 0, v, 2, NULL, &obj);
	errno = saved;
}
