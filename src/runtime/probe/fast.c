/* The common case of a probed call's entry and exit, compiled to use general registers
 * only: entry.S calls these first, without saving xmm0-15, and falls back to the full
 * cp_probe_enter / cp_probe_leave (probe.c, SSE registers saved) when they return 0: a
 * thread's first probe event, a calling context not in the cache, a tail call, -m cputime.
 * They return 0 only before changing anything the full versions would do differently.
 * Async-signal-safe; nothing here calls a function outside this file. */
#pragma GCC target("general-regs-only")

#include "runtime/probe/probe-hot.h"

#include "base/sigsafe/banned.h"

uintptr_t cp_probe_enter_fast(struct cp_probe *p, struct cp_probe_regs *regs) CP_HIDDEN;
uintptr_t cp_probe_enter_fast(struct cp_probe *p, struct cp_probe_regs *regs)
{
	struct cp_thread *t = cp_self;
	if (probe_off(t))
		return p->tramp;
	struct cp_probe_thread *pt = t->probe;
	if (!pt || cp_probe_g.cputime)
		return 0;
	uintptr_t slot = (uintptr_t)&regs->ra, ra = regs->ra;
	if (ra == (uintptr_t)cp_probe_return)
		return 0;
	t->busy = 1;
	pop_gone(pt, t, slot, 0, 1);
	if (probe_skipped(pt, p))
		goto out;
	uint32_t parent;
	uint64_t where;
	probe_parent(pt, slot, &parent, &where);
	int hit;
	struct cp_probe_cache *c = cache_slot(pt, parent, ra, where, p->index, &hit);
	if (!hit) {
		t->busy = 0;
		return 0;
	}
	frame_push(pt, t, p, regs, c->ctx, c->leaf, 0);
out:
	t->busy = 0;
	return p->tramp;
}

uintptr_t cp_probe_leave_fast(uintptr_t sp) CP_HIDDEN;
uintptr_t cp_probe_leave_fast(uintptr_t sp)
{
	if (cp_probe_g.cputime)
		return 0;
	uint64_t now = rdtsc();
	struct cp_thread *t = cp_self;
	struct cp_probe_thread *pt = t ? t->probe : NULL;
	uintptr_t slot = sp - 8;
	if (!pt || !pt->depth || (uintptr_t)pt->stack[pt->depth - 1].slot != slot)
		return 0; /* frames to drop first, or lost: the full version */
	int was_busy = t->busy;
	t->busy = 1;
	uintptr_t ra = pt->stack[pt->depth - 1].real_ra;
	frame_end(pt, t, now);
	t->busy = was_busy;
	return ra;
}
