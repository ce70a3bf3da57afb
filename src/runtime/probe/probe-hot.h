/* The probe hot path's helpers, inline in probe.c and in fast.c (which compiles them with
 * general-registers-only code, so the common case needs no SSE register saves). */
#ifndef CP_RUNTIME_PROBE_HOT_H
#define CP_RUNTIME_PROBE_HOT_H

#include "runtime/probe/probe-internal.h"

uint64_t cp_probe_thread_cpu_ns(void) CP_HIDDEN;

static inline uint64_t rdtsc(void)
{
	uint32_t lo, hi;
	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
}

static inline uint64_t cycles_to_ns(uint64_t c)
{
	return (uint64_t)(((unsigned __int128)c * cp_probe_g.ns_mult) >> 32);
}

/* Cached (parent context, call site, stack position, probe) -> (context, leaf). */
static inline struct cp_probe_cache *cache_slot(struct cp_probe_thread *pt, uint32_t parent,
						uintptr_t ra, uint64_t where, uint32_t probe,
						int *hit)
{
	uint64_t h = (ra ^ (where * 0x9e3779b97f4a7c15ull) ^ ((uint64_t)parent << 32) ^ probe) *
		     0xff51afd7ed558ccdull;
	for (uint32_t i = 0, s = (uint32_t)(h >> 40); i < 32; i++, s++) {
		struct cp_probe_cache *c = &pt->cache[s & (CP_PROBE_CACHE - 1)];
		if (!c->ra) {
			*hit = 0;
			return c;
		}
		if (c->ra == ra && c->where == where && c->parent == parent && c->probe == probe) {
			*hit = 1;
			return c;
		}
	}
	*hit = 0;
	return NULL;
}

/* Is the thread's probe state off limits now (no thread, re-entered, stopped, disabled, a
 * fork child rebuilding)? The probe then only jumps on to the function. */
static inline int probe_off(const struct cp_thread *t)
{
	return !t || t->busy || t->stopped || !cp_rt.enabled || !t->cct.hdr || cp_probe_g.paused;
}

/* CATCH's subtree controls: outside every selected function, or inside a filtered one,
 * calls run unmeasured (and cost no shadow-stack entry); so do calls past the maximum
 * depth (counted). */
static inline int probe_skipped(struct cp_probe_thread *pt, const struct cp_probe *p)
{
	if (pt->filters || (cp_probe_g.has_select && !pt->selects && !(p->role & CP_PROBE_SELECT)))
		return 1;
	if (pt->depth == CP_PROBE_MAX_DEPTH) {
		pt->too_deep++;
		return 1;
	}
	return 0;
}

/* The call's parent on the shadow stack: its context (0: the root, no live probed caller)
 * and where the call's return-address slot is relative to the parent's (its absolute
 * address without a parent), the cache key with the return address. */
static inline int probe_parent(const struct cp_probe_thread *pt, uintptr_t slot, uint32_t *parent,
			       uint64_t *where)
{
	const struct cp_probe_frame *up = pt->depth ? &pt->stack[pt->depth - 1] : NULL;
	int have_parent = up && !up->stale;
	*parent = have_parent ? up->ctx : 0;
	*where = have_parent ? (uintptr_t)up->slot - slot : slot;
	return have_parent;
}

/* Counts the call on its leaf node, pushes its frame on the shadow stack and replaces its
 * return address by the exit trampoline; the clocks start last, so that they measure the
 * probed code only (cputime: the system call's cost stays outside it too). */
static inline void frame_push(struct cp_probe_thread *pt, struct cp_thread *t,
			      const struct cp_probe *p, struct cp_probe_regs *regs, uint32_t ctx,
			      uint32_t leaf, int cputime)
{
	cp_cct_node(&t->cct, leaf)->metrics[cp_probe_g.calls_metric]++;
	struct cp_probe_frame *f = &pt->stack[pt->depth++];
	f->slot = &regs->ra;
	f->real_ra = regs->ra;
	f->ctx = ctx;
	f->leaf = leaf;
	f->stale = 0;
	f->restored = 0;
	f->child = 0;
	f->cpu_child = 0;
	f->role = (uint8_t)p->role;
	f->probe = p->index;
	pt->selects += !!(p->role & CP_PROBE_SELECT);
	pt->filters += !!(p->role & CP_PROBE_FILTER);
	regs->ra = (uintptr_t)cp_probe_return;
	if (cputime)
		f->cpu0 = cp_probe_thread_cpu_ns();
	f->t0 = rdtsc();
}

static inline void frame_end(struct cp_probe_thread *pt, struct cp_thread *t, uint64_t now)
{
	struct cp_probe_frame *f = &pt->stack[--pt->depth];
	struct cp_probe_frame *up = pt->depth ? &pt->stack[pt->depth - 1] : NULL;
	uint64_t dur = now - f->t0;
	uint64_t excl = dur > f->child ? dur - f->child : 0;
	pt->selects -= !!(f->role & CP_PROBE_SELECT);
	pt->filters -= !!(f->role & CP_PROBE_FILTER);
	if (up)
		up->child += dur;
	/* After the runtime finished (exit) the tree may be gone: nothing is recorded. */
	if (!f->stale && cp_rt.enabled && t->cct.hdr)
		cp_cct_node(&t->cct, f->leaf)->metrics[cp_probe_g.time_metric] +=
		    cycles_to_ns(excl);
	if (cp_probe_g.cputime) {
		uint64_t c = cp_probe_thread_cpu_ns(), cdur = c > f->cpu0 ? c - f->cpu0 : 0;
		if (up)
			up->cpu_child += cdur;
		if (!f->stale && cp_rt.enabled && t->cct.hdr)
			cp_cct_node(&t->cct, f->leaf)->metrics[cp_probe_g.cpu_metric] +=
			    cdur > f->cpu_child ? cdur - f->cpu_child : 0;
	}
}

/* Frames whose activation is gone (longjmp, an exception, a missed exit): their slot is
 * below the current one on the same stack, or it is the current slot but holds another
 * return address now. */
static inline void pop_gone(struct cp_probe_thread *pt, struct cp_thread *t, uintptr_t slot,
			    uint64_t now, int at_entry)
{
	while (pt->depth) {
		struct cp_probe_frame *f = &pt->stack[pt->depth - 1];
		/* A frame whose slot still holds the trampoline may still return through it
		 * (it may live on another stack: a signal handler's, a coroutine's, or share
		 * the slot with a tail call), so only frames whose return address was
		 * overwritten are ended here; a stale one whose slot was not reused yet waits
		 * (cp_probe_leave ends those above a returning frame). */
		if ((uintptr_t)f->slot > slot || *f->slot == (uintptr_t)cp_probe_return)
			return;
		if (!now) /* read the TSC only when a frame ends (rdtsc is ~10 ns on a VM) */
			now = rdtsc();
		frame_end(pt, t, now);
	}
}

#endif
