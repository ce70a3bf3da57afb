/* Loop probes' hot path: the snippets of a relocated function (patch/relocate-fn.h) call
 * cp_loop_entry (entry.S) with a struct cp_loop_edge_rt in r11, which calls cp_loop_event
 * here. Each event belongs to a loop of the function whose probed activation is on top
 * of the thread's shadow stack; the loop's node is a PC node at its header under that
 * activation's context (the call node), so correlation puts it in the loop's scope:
 *   entry  a loop activation starts: loop-entries and loop-iterations + 1
 *   back   loop-iterations + 1 (an activation is opened if the loop was entered before
 *          its probes were inserted)
 *   exit   the activation ends: its wall time (TSC) goes to loop-time
 * Activations of frames that are gone (longjmp, exceptions) are dropped at the next
 * event. Async-signal-safe; general registers only (the snippet saves no SSE state). */
#pragma GCC target("general-regs-only")

#include "runtime/probe/probe-hot.h"

#include "patch/relocate-fn.h"

#include "base/sigsafe/banned.h"

static int act_find(const struct cp_probe_thread *pt, uint32_t loop)
{
	for (int i = (int)pt->nacts - 1; i >= 0; i--) {
		if (pt->acts[i].depth != pt->depth)
			return -1;
		if (pt->acts[i].loop == loop)
			return i;
	}
	return -1;
}

static void act_end(struct cp_probe_thread *pt, struct cp_thread *t, int i, uint64_t now)
{
	const struct cp_loop_act *a = &pt->acts[i];
	cp_cct_node(&t->cct, a->node)->metrics[cp_probe_g.ltime_metric] +=
	    cycles_to_ns(now - a->t0);
	pt->nacts = (uint32_t)i;
}

static void act_open(struct cp_probe_thread *pt, struct cp_thread *t,
		     const struct cp_probe_frame *f, uint32_t loop, uint64_t now)
{
	const struct cp_loop_rt *L = &cp_probe_g.loops[loop];
	uint32_t node = cp_cct_child(&t->cct, f->ctx, CP_MF_NODE_PC, L->module, L->header);
	if (node == CP_CCT_NONE || pt->nacts == CP_LOOP_ACTIVE) {
		t->cct.hdr->dropped++;
		return;
	}
	struct cp_loop_act *a = &pt->acts[pt->nacts++];
	a->loop = loop;
	a->depth = pt->depth;
	a->node = node;
	a->slot = (uintptr_t)f->slot;
	a->t0 = now;
}

static void loop_one(struct cp_probe_thread *pt, struct cp_thread *t, uint8_t kind, uint32_t loop,
		     uint64_t now)
{
	const struct cp_probe_frame *f = pt->depth ? &pt->stack[pt->depth - 1] : NULL;
	if (!f || f->stale || f->probe != cp_probe_g.loops[loop].probe)
		return; /* not inside the probed activation of the loop's function */
	int i = act_find(pt, loop);
	if (kind == CP_LOOP_EV_EXIT) {
		if (i >= 0)
			act_end(pt, t, i, now);
		return;
	}
	if (kind == CP_LOOP_EV_ENTRY && i >= 0) {
		act_end(pt, t, i, now); /* entered again without its exit seen */
		i = -1;
	}
	if (i < 0) {
		act_open(pt, t, f, loop, now);
		i = act_find(pt, loop);
		if (i < 0)
			return;
	}
	uint64_t *m = cp_cct_node(&t->cct, pt->acts[i].node)->metrics;
	m[cp_probe_g.iter_metric]++;
	if (kind == CP_LOOP_EV_ENTRY)
		m[cp_probe_g.entry_metric]++;
}

void cp_loop_event(const struct cp_loop_edge_rt *e) CP_HIDDEN;
void cp_loop_event(const struct cp_loop_edge_rt *e)
{
	struct cp_thread *t = cp_self;
	if (probe_off(t) || !t->probe)
		return;
	struct cp_probe_thread *pt = t->probe;
	t->busy = 1;
	uint64_t now = rdtsc();
	/* Activations whose function's frame is gone. */
	while (pt->nacts) {
		const struct cp_loop_act *a = &pt->acts[pt->nacts - 1];
		if (a->depth <= pt->depth && a->depth &&
		    (uintptr_t)pt->stack[a->depth - 1].slot == a->slot)
			break;
		pt->nacts--;
	}
	for (uint32_t k = 0; k < e->n; k++)
		loop_one(pt, t, e->kind[k], e->loop[k], now);
	t->busy = 0;
}

/* A pc in copy r: its original place (0 if none); *sp_adj as cp_unwind_set_pc_map says. */
static uintptr_t map_in(const struct cp_loop_reloc *r, uintptr_t pc, int is_return,
			uintptr_t *sp_adj)
{
	const uint32_t *at = cp_probe_g.map_at + r->first;
	uint32_t off = (uint32_t)(pc - r->copy), lo = 0, hi = r->n;
	/* The last piece starting at or before off (a return address: before it). */
	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;
		if (at[mid] < off + (uint32_t)!is_return)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return 0;
	uint32_t i = r->first + lo - 1, into = off - cp_probe_g.map_at[i];
	uint32_t info = cp_probe_g.map_info[i];
	uintptr_t orig = r->orig + cp_probe_g.map_orig[i];
	if (info & CP_RELOC_SNIPPET) {
		int adj = into < CP_RELOC_LEN(info) ? cp_reloc_snippet_sp(into, is_return) : -1;
		if (adj < 0)
			return 0;
		*sp_adj = (uintptr_t)adj;
		/* A return address is looked up (and attributed) at ra - 1: the instruction. */
		return orig + (is_return ? 1u : 0u);
	}
	if (!is_return && !into)
		return orig;
	if (is_return && into == CP_RELOC_LEN(info))
		return orig + CP_RELOC_OLEN(info);
	return 0;
}

uintptr_t cp_loop_map_pc(uintptr_t pc, int is_return, uintptr_t *sp_adj)
{
	uint32_t n = __atomic_load_n(&cp_probe_g.nrelocs, __ATOMIC_ACQUIRE);
	*sp_adj = 0;
	for (uint32_t k = 0; k < n; k++) {
		const struct cp_loop_reloc *r = &cp_probe_g.relocs[k];
		if (pc - r->copy < r->len)
			return map_in(r, pc, is_return, sp_adj);
	}
	return pc;
}
