/* The probe hot path: entry (shadow-stack push, calling context, call count) and exit
 * (exclusive wall time), plus the per-thread state. Runs in any thread, possibly inside
 * signal handlers: async-signal-safe (no malloc, no locks, no stdio). */
#include "runtime/probe/probe-hot.h"

#include "runtime/unwind/modules.h"
#include "runtime/unwind/unwind.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "base/sigsafe/sigsafe.h"
#include "base/sigsafe/banned.h"

struct cp_probe_global cp_probe_g;

static struct cp_probe_thread *thread_state(struct cp_thread *t)
{
	if (t->probe)
		return t->probe;
	void *m = mmap(NULL, sizeof(struct cp_probe_thread), PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (m == MAP_FAILED)
		return NULL;
	t->probe = m;
	return m;
}

static uint32_t frame_node(struct cp_thread *t, uint32_t parent, uintptr_t ra)
{
	const struct cp_module *m = cp_modules_find(ra - 1);
	return cp_cct_child(&t->cct, parent, CP_MF_NODE_CALL, m ? m->id : CP_MF_MODULE_NONE,
			    m ? ra - m->bias : ra);
}

/* The context node of a call whose return address is regs->ra: under `parent` (a probed
 * frame's context, or the root) the frames between that frame and this call. */
static uint32_t context_walk(struct cp_thread *t, struct cp_probe_regs *regs, uint32_t parent,
			     int have_parent)
{
	ucontext_t uc;
	greg_t *g = uc.uc_mcontext.gregs;
	enum cp_unwind_status status = CP_UNWIND_FAILED;
	memset(&uc.uc_mcontext, 0, sizeof uc.uc_mcontext);
	g[REG_RIP] = (greg_t)regs->ra;
	g[REG_RSP] = (greg_t)(uintptr_t)(&regs->ra + 1);
	g[REG_RBP] = (greg_t)regs->rbp;
	g[REG_RBX] = (greg_t)regs->rbx;
	g[REG_R12] = (greg_t)regs->r12;
	g[REG_R13] = (greg_t)regs->r13;
	g[REG_R14] = (greg_t)regs->r14;
	g[REG_R15] = (greg_t)regs->r15;
	struct cp_probe_thread *pt = t->probe;
	/* With a parent, the walk ends at its return-address slot: the frames between it and
	 * this call, whatever the depth (the unwinder asks cp_probe_real_ra for each probed
	 * frame's return address, a search of the shadow stack). */
	pt->walk_stop = have_parent ? (uintptr_t)pt->stack[pt->depth - 1].slot : 0;
	pt->walk_hit = 0;
	int n = cp_unwind_context(&uc, t->frames, CP_MAX_FRAMES, &status);
	pt->walk_stop = 0;
	uintptr_t ret = (uintptr_t)cp_probe_return;
	int k = n;
	if (have_parent) {
		if (!pt->walk_hit) /* the walk did not reach the parent: the call site only */
			k = n > 0 ? 1 : 0;
	} else {
		/* No live probed caller, yet a replaced return address above (the activations
		 * a fork child inherited): the unwinder cannot step through it correctly, so the
		 * path stops there, as a partial one. */
		for (k = 0; k < n && t->frames[k].pc != ret; k++)
			;
		if (k < n || status != CP_UNWIND_COMPLETE)
			parent = cp_cct_child(&t->cct, 0, CP_MF_NODE_PARTIAL, CP_MF_MODULE_NONE, 0);
	}
	uint32_t node = parent;
	for (int i = k - 1; i >= 0 && node != CP_CCT_NONE; i--)
		if (!cp_rt_hides_frame(t->frames[i].pc, t->frames[i].kind == CP_FRAME_RETURN))
			node = frame_node(t, node, t->frames[i].pc);
	if (k == 0 && node != CP_CCT_NONE)
		node = frame_node(t, node, regs->ra);
	return node;
}

/* Thread CPU time: a system call (CLOCK_THREAD_CPUTIME_ID has no vDSO path), 0.3-1 us
 * here; only with -m cputime. */
uint64_t cp_probe_thread_cpu_ns(void)
{
	struct timespec ts;
	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts))
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uintptr_t cp_probe_enter(struct cp_probe *p, struct cp_probe_regs *regs) CP_HIDDEN;
uintptr_t cp_probe_enter(struct cp_probe *p, struct cp_probe_regs *regs)
{
	struct cp_thread *t = cp_self;
	if (probe_off(t))
		return p->tramp;
	t->busy = 1; /* before anything that may call probed code (mmap, the unwinder) */
	struct cp_probe_thread *pt = thread_state(t);
	if (!pt) {
		t->busy = 0;
		return p->tramp;
	}
	uintptr_t slot = (uintptr_t)&regs->ra;
	pop_gone(pt, t, slot, 0, 1);
	if (probe_skipped(pt, p))
		goto out;
	uintptr_t ra = regs->ra;
	uint32_t parent, ctx, leaf;
	uint64_t where;
	int have_parent = probe_parent(pt, slot, &parent, &where);
	if (ra == (uintptr_t)cp_probe_return && have_parent) {
		/* A tail call from the probed parent: it belongs to the parent's context. */
		ctx = parent;
		leaf = cp_cct_child(&t->cct, ctx, CP_MF_NODE_PC, p->module, p->offset);
	} else {
		int hit;
		struct cp_probe_cache *c = cache_slot(pt, parent, ra, where, p->index, &hit);
		if (hit) {
			ctx = c->ctx;
			leaf = c->leaf;
		} else {
			ctx = context_walk(t, regs, parent, have_parent);
			leaf = ctx == CP_CCT_NONE ? CP_CCT_NONE
						  : cp_cct_child(&t->cct, ctx, CP_MF_NODE_PC,
								 p->module, p->offset);
			if (c && leaf != CP_CCT_NONE) {
				c->parent = parent;
				c->where = where;
				c->probe = p->index;
				c->ctx = ctx;
				c->leaf = leaf;
				c->ra = ra;
			}
		}
	}
	if (leaf == CP_CCT_NONE) {
		t->cct.hdr->dropped++;
		goto out;
	}
	frame_push(pt, t, p, regs, ctx, leaf, cp_probe_g.cputime);
out:
	t->busy = 0;
	return p->tramp;
}

/* frame_end for frame i, which may have frames above it (they move down one place). */
static void frame_end_at(struct cp_probe_thread *pt, struct cp_thread *t, uint32_t i, uint64_t now)
{
	uint32_t depth = pt->depth;
	pt->depth = i + 1; /* frame i on top: its time goes to frame i - 1, its caller */
	frame_end(pt, t, now);
	memmove(&pt->stack[i], &pt->stack[i + 1], (depth - i - 1) * sizeof pt->stack[0]);
	pt->depth = depth - 1;
}

static void lost_return(void)
{
	static const char msg[] = "callpath: a probed function returned through a frame the "
				  "probe runtime lost track of; aborting\n";
	cp_ss_write_all(2, msg, sizeof msg - 1);
	abort();
}

uintptr_t cp_probe_leave(uintptr_t sp) CP_HIDDEN;
uintptr_t cp_probe_leave(uintptr_t sp)
{
	uint64_t now = rdtsc();
	struct cp_thread *t = cp_self;
	struct cp_probe_thread *pt = t ? t->probe : NULL;
	uintptr_t slot = sp - 8;
	if (!pt)
		lost_return();
	int was_busy = t->busy;
	t->busy = 1;
	pop_gone(pt, t, slot, now, 0);
	int i = (int)pt->depth - 1;
	while (i >= 0 && (uintptr_t)pt->stack[i].slot != slot)
		i--;
	if (i < 0)
		lost_return();
	/* Frames above the returning one: ended when their return address was overwritten
	 * (left by longjmp); kept when it still is the trampoline (live on another stack). */
	for (int j = (int)pt->depth - 1; j > i; j--)
		if (*pt->stack[j].slot != (uintptr_t)cp_probe_return)
			frame_end_at(pt, t, (uint32_t)j, now);
	uintptr_t ra = pt->stack[i].real_ra;
	frame_end_at(pt, t, (uint32_t)i, now);
	t->busy = was_busy;
	return ra;
}

/* Exceptions and backtraces walk the stack with the real return addresses: restore writes
 * them back into the slots that still hold the trampoline, rearm puts the trampoline back
 * where the real one still is. Frames an exception passes through are ended at the next
 * probe event that finds them gone. */
static void returns_set(int restore)
{
	struct cp_thread *t = cp_self;
	struct cp_probe_thread *pt = t ? t->probe : NULL;
	uintptr_t tramp = (uintptr_t)cp_probe_return;
	if (!pt)
		return;
	for (uint32_t i = 0; i < pt->depth; i++) {
		struct cp_probe_frame *f = &pt->stack[i];
		if (f->restored != restore && *f->slot == (restore ? tramp : f->real_ra)) {
			*f->slot = restore ? f->real_ra : tramp;
			f->restored = (uint8_t)restore;
		}
	}
}

void cp_probe_restore_returns(void)
{
	returns_set(1);
}

void cp_probe_rearm_returns(void)
{
	returns_set(0);
}

static struct cp_probe_thread *fork_keep;

void cp_probe_before_fork_forget(void)
{
	cp_probe_g.paused = 1; /* the runtime now calls libc (probed, maybe) on state it drops */
	fork_keep = cp_self ? cp_self->probe : NULL;
}

void cp_probe_after_fork(void)
{
	struct cp_thread *t = cp_self;
	struct cp_probe_thread *pt = fork_keep;
	fork_keep = NULL;
	cp_probe_g.paused = 0;
	if (!pt)
		return;
	for (uint32_t i = 0; i < pt->depth; i++)
		pt->stack[i].stale = 1;
	memset(pt->cache, 0, sizeof pt->cache);
	if (t)
		t->probe = pt;
}

uintptr_t cp_probe_real_ra(uintptr_t slot)
{
	struct cp_thread *t = cp_self;
	struct cp_probe_thread *pt = t ? t->probe : NULL;
	if (!pt)
		return 0;
	if (slot == pt->walk_stop) { /* context_walk reached the parent (0 ends the walk) */
		pt->walk_hit = 1;
		return 0;
	}
	uint32_t d = __atomic_load_n(&pt->depth, __ATOMIC_RELAXED);
	if (d > CP_PROBE_MAX_DEPTH)
		d = CP_PROBE_MAX_DEPTH;
	/* Innermost first; matched by stack position, so frames a longjmp abandoned (still
	 * on the shadow stack, their slots reused) cannot misalign the mapping. */
	while (d-- > 0)
		if ((uintptr_t)pt->stack[d].slot == slot && !pt->stack[d].restored)
			return pt->stack[d].real_ra;
	return 0;
}
