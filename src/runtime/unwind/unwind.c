/* The unwinder's main loop and its recipe cache.
 *
 * A recipe is one CFI row packed into two 64-bit words (w1: CFA and RA rules, w2: the
 * callee-saved registers). Recipes are cached per lookup address in a direct-mapped
 * table shared by all threads. A slot holds (check, w1, w2), each word written and read
 * with relaxed atomics, check = key ^ w1 ^ rot(w2). A reader accepts a slot only if the
 * check matches its own key, so a slot torn by concurrent writers reads as a miss, never
 * as another key's recipe (the lockless-transposition-table trick).
 *
 * The hot path (run_packed) applies cached "fast" recipes straight from their packed
 * form; everything else goes through the general path (step_general): cache misses
 * (cfi.c interprets the FDE), signal frames, PLT and expression CFAs, fallbacks.
 *
 * Signal-time code, async-signal-safe: no allocation (the table is mmap'd by cp_unwind_init,
 * unwind-init.c), no locks. */
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>

#include "runtime/unwind/modules.h"
#include "runtime/unwind/unwind-internal.h"

#include "base/sigsafe/banned.h"

#define CACHE_BITS 16
#define CACHE_SIZE (1u << CACHE_BITS)

struct cache_slot { /* 32 bytes: two per cache line, indexed by a shift */
	uint64_t check, w1, w2, pad;
};

_Static_assert(sizeof(struct cache_slot) == 32, "cache_slot() computes offsets for 32-byte slots");

struct recipe {
	uint64_t w1, w2;
};

static struct cache_slot *cache;
/* The dynamic loader's entry code (glibc's _start and _dl_start_user, hand-written, no
 * CFI): the outermost frame of the constructors it runs through _dl_init. */
static uintptr_t loader_start_lo, loader_start_hi;

void uw_loader_start_install(uintptr_t lo, uintptr_t hi)
{
	loader_start_lo = lo;
	loader_start_hi = hi;
}

/* Packed recipe layout. w1, hot fields first so that they decode in one instruction:
 *  0-31 cfa_off (s32) | 32-39 ra_off/8 (s8) | 40-42 kind | 43 valid | 44-45 cfa_how
 *  46 CFA is rsp + off with off >= 8 (moves up) | 47 fast: normal row, CFA = reg + off,
 *  RA at CFA - 8, no rbp-relative saves
 *  48-52 cfa_reg | 53-57 plt_thr
 * w2: for tracked callee-saved register i (cp_saved_regs[i]): off/8 (s8) in byte i, and
 *  its rule in bits 48+2i..49+2i (0 same, 1 at CFA+off, 2 unknown, 3 at rbp+off) */
#define W1_CFA_OFF(v) ((int32_t)(uint32_t)(v))
#define W1_RA_OFF8(v) ((int8_t)((v) >> 32))
#define W1_KIND(v) (((v) >> 40) & 7)
#define R_VALID (1ull << 43)
#define W1_CFA_HOW(v) (((v) >> 44) & 3)
#define R_FAST_RSP (1ull << 46)
#define R_FAST (1ull << 47)
#define W1_CFA_REG(v) (((v) >> 48) & 31)
#define W1_PLT_THR(v) (((v) >> 53) & 31)
#define HOT_UNTRACKED ((1u << 12) | (1u << 13) | (1u << 14) | (1u << 15))
#define W2_HOWS(v) ((unsigned)((v) >> 48) & 0xfff)
#define W2_OFF8(v, i) ((int8_t)((v) >> (8 * (i))))
/* Any register saved at rbp + off (rule 3)? */
#define W2_HAS_AT_RBP(v) (W2_HOWS(v) & (W2_HOWS(v) >> 1) & 0x555)

static int fits_s8x8(int32_t v)
{
	return (v & 7) == 0 && v / 8 >= -128 && v / 8 <= 127;
}

static int saved_pack(const struct cp_cfi_row *r, uint64_t *w2)
{
	*w2 = 0;
	for (int i = 0; i < CP_NSAVED; i++) {
		uint64_t how;
		switch (r->saved_how[i]) {
		case CP_REG_SAME:
			how = 0;
			break;
		case CP_REG_CFA:
			how = 1;
			break;
		case CP_REG_AT_REG:
			if (r->saved_reg[i] != CP_DW_RBP)
				return -1;
			how = 3;
			break;
		default:
			how = 2;
		}
		if (how & 1 && !fits_s8x8(r->saved_off[i]))
			return -1;
		*w2 |= how << (48 + 2 * i) | (uint64_t)(uint8_t)(int8_t)(r->saved_off[i] / 8)
						 << (8 * i);
	}
	return 0;
}

static int recipe_pack(const struct cp_cfi_row *r, struct recipe *rc)
{
	if (r->cfa_reg > 31 || r->plt_thr > 31)
		return -1;
	if (r->kind == CP_ROW_NORMAL && !fits_s8x8(r->ra_off))
		return -1;
	if (saved_pack(r, &rc->w2) < 0)
		return -1;
	rc->w1 = (uint64_t)(uint32_t)r->cfa_off | (uint64_t)(uint8_t)(int8_t)(r->ra_off / 8) << 32 |
		 (uint64_t)r->kind << 40 | R_VALID | (uint64_t)r->cfa_how << 44 |
		 (uint64_t)r->cfa_reg << 48 | (uint64_t)r->plt_thr << 53;
	if (r->kind == CP_ROW_NORMAL && r->cfa_how == CP_CFA_REG && r->cfa_reg < CP_DW_NREGS &&
	    r->ra_off == -8 && !W2_HAS_AT_RBP(rc->w2))
		rc->w1 |= r->cfa_reg == CP_DW_RSP && r->cfa_off >= 8 ? R_FAST | R_FAST_RSP : R_FAST;
	return 0;
}

static void recipe_unpack(const struct recipe *rc, struct cp_cfi_row *r)
{
	static const uint8_t how_of[4] = {CP_REG_SAME, CP_REG_CFA, CP_REG_OTHER, CP_REG_AT_REG};
	uint64_t v = rc->w1;

	r->kind = W1_KIND(v);
	r->cfa_how = W1_CFA_HOW(v);
	r->cfa_reg = W1_CFA_REG(v);
	r->plt_thr = W1_PLT_THR(v);
	r->cfa_off = W1_CFA_OFF(v);
	r->ra_how = CP_REG_CFA;
	r->ra_off = W1_RA_OFF8(v) * 8;
	for (int i = 0; i < CP_NSAVED; i++) {
		r->saved_how[i] = how_of[(W2_HOWS(rc->w2) >> (2 * i)) & 3];
		r->saved_reg[i] = CP_DW_RBP;
		r->saved_off[i] = W2_OFF8(rc->w2, i) * 8;
	}
}

/* The slot of a key (2*pc, or 2*pc - 1 for return addresses): the low key bits, mixed
 * with higher ones to spread modules, computed directly as a byte offset. Cheap on
 * purpose: it sits on the critical path (load RA -> slot -> load next RA). */
static inline uintptr_t cache_offset(uint64_t key)
{
	return ((key << 5) ^ (key >> 12)) & ((uintptr_t)(CACHE_SIZE - 1) << 5);
}

static inline struct cache_slot *cache_slot(uint64_t key)
{
	return (struct cache_slot *)((char *)cache + cache_offset(key));
}

static inline uint64_t mix(uint64_t key, const struct recipe *rc)
{
	return key ^ rc->w1 ^ ((rc->w2 << 29) | (rc->w2 >> 35));
}

static inline int cache_get(uint64_t key, struct recipe *rc)
{
	struct cache_slot *s = cache_slot(key);
	uint64_t c = __atomic_load_n(&s->check, __ATOMIC_RELAXED);

	rc->w1 = __atomic_load_n(&s->w1, __ATOMIC_RELAXED);
	rc->w2 = __atomic_load_n(&s->w2, __ATOMIC_RELAXED);
	return (rc->w1 & R_VALID) && mix(key, rc) == c;
}

static inline void cache_put(uint64_t key, const struct recipe *rc)
{
	struct cache_slot *s = cache_slot(key);

	__atomic_store_n(&s->check, mix(key, rc), __ATOMIC_RELAXED);
	__atomic_store_n(&s->w1, rc->w1, __ATOMIC_RELAXED);
	__atomic_store_n(&s->w2, rc->w2, __ATOMIC_RELAXED);
}

size_t uw_cache_bytes(void)
{
	return CACHE_SIZE * sizeof(struct cache_slot);
}

int uw_cache_ready(void)
{
	return __atomic_load_n(&cache, __ATOMIC_ACQUIRE) != NULL;
}

void uw_cache_install(void *table)
{
	__atomic_store_n(&cache, (struct cache_slot *)table, __ATOMIC_RELEASE);
}

void cp_unwind_cache_flush(void)
{
	if (!cache)
		return;
	for (uint32_t i = 0; i < CACHE_SIZE; i++) {
		__atomic_store_n(&cache[i].w1, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&cache[i].check, 0, __ATOMIC_RELAXED);
	}
}

/* A return address replaced by a trampoline that keeps the real one (the probes' exit,
 * probe/, above this module): registered once at init, before any signal. */
static uintptr_t ret_tramp;
static uintptr_t (*ret_real)(uintptr_t slot);

void cp_unwind_set_return_hook(uintptr_t trampoline, uintptr_t (*real_ra)(uintptr_t slot))
{
	ret_real = real_ra;
	__atomic_store_n(&ret_tramp, trampoline, __ATOMIC_RELEASE);
}

typedef uintptr_t (*pc_map_fn)(uintptr_t pc, int is_return, uintptr_t *sp_adj);
static pc_map_fn pc_map;

void cp_unwind_set_pc_map(pc_map_fn map)
{
	__atomic_store_n(&pc_map, map, __ATOMIC_RELEASE);
}

uintptr_t cp_unwind_map_return(uintptr_t ra)
{
	pc_map_fn map = __atomic_load_n(&pc_map, __ATOMIC_ACQUIRE);
	uintptr_t adj, orig = map && ra ? map(ra, 1, &adj) : ra;
	return orig ? orig : ra;
}

/* *ra read from slot: the real return address if it is the trampoline's, at its original
 * place if in moved code (*sp_adj: what to add to the caller's rsp, the CFA). -1 if that
 * is lost (the walk stops). */
static inline int real_return(uintptr_t *ra, uintptr_t slot, uintptr_t *sp_adj)
{
	*sp_adj = 0;
	if (__builtin_expect(*ra == ret_tramp && ret_tramp, 0)) {
		*ra = ret_real(slot);
		if (!*ra)
			return -1;
	}
	pc_map_fn map = __atomic_load_n(&pc_map, __ATOMIC_ACQUIRE);
	if (__builtin_expect(map != NULL, 0) && *ra) {
		*ra = map(*ra, 1, sp_adj);
		if (!*ra)
			return -1;
	}
	return 0;
}

static inline uint64_t lookup_key(uintptr_t pc, int exact)
{
	return ((uint64_t)(exact ? pc : pc - 1) << 1) | (uint64_t)!exact;
}

/* The row for a frame, from the CFI (a cache miss). Exact pcs (frame 0, signal frames)
 * are looked up as they are, return addresses at ra - 1 (inside the call), so that a
 * call at the end of a function finds that function's row. */
static void row_compute(uintptr_t pc, int exact, struct cp_cfi_row *row)
{
	uintptr_t at = exact ? pc : pc - 1;
	const struct cp_module *m = cp_modules_find(at);
	struct recipe rc;

	if (!m) {
		memset(row, 0, sizeof(*row));
		row->kind = CP_ROW_NONE;
		return;
	}
	if (cp_cfi_find_row(m, at, row) < 0)
		row->kind = CP_ROW_UNSUPPORTED;
	else if (row->kind == CP_ROW_NONE && !m->foreign && at >= loader_start_lo &&
		 at < loader_start_hi)
		row->kind = CP_ROW_OUTERMOST; /* a constructor run by the loader at start-up */
	if (cp_cfi_is_sigreturn(m, pc) || (exact && cp_cfi_is_sigreturn(m, pc - 7)))
		row->kind = CP_ROW_SIGNAL;
	else if (row->kind == CP_ROW_SIGNAL)
		row->kind = CP_ROW_UNSUPPORTED; /* an 'S' frame that is not __restore_rt */
	if (cache && recipe_pack(row, &rc) == 0)
		cache_put(lookup_key(pc, exact), &rc);
}

static int reg_value(const struct uw_regs *rg, unsigned reg, uintptr_t *out)
{
	if (reg >= CP_DW_NREGS || !UW_KNOWN(rg, reg))
		return -1;
	*out = rg->r[reg];
	return 0;
}

static int row_cfa(const struct uw_window *w, const struct uw_regs *rg,
		   const struct cp_cfi_row *row, uintptr_t *cfa)
{
	uintptr_t base;

	if (reg_value(rg, row->cfa_reg, &base) < 0)
		return -1;
	switch (row->cfa_how) {
	case CP_CFA_REG:
		*cfa = base + row->cfa_off;
		return 0;
	case CP_CFA_DEREF:
		return uw_read(w, base + row->cfa_off, cfa);
	case CP_CFA_PLT:
		if (reg_value(rg, CP_DW_RIP, &base) < 0)
			return -1;
		*cfa = rg->r[CP_DW_RSP] + row->cfa_off + ((base & 15) >= row->plt_thr ? 8 : 0);
		return 0;
	}
	return -1;
}

/* One CFI step: caller's rsp = CFA, rip = saved RA, callee-saved registers per their
 * rules (computed from this frame's values, then committed). */
static int step_cfi(const struct uw_window *w, struct uw_regs *rg, const struct cp_cfi_row *row)
{
	uintptr_t cfa, ra, v[CP_NSAVED], base;
	uint32_t known = (1u << CP_DW_RSP) | (1u << CP_DW_RIP);

	if (row_cfa(w, rg, row, &cfa) < 0 || cfa <= rg->r[CP_DW_RSP])
		return -1;
	if (uw_read(w, cfa + row->ra_off, &ra) < 0)
		return -1;
	/* A probed call's return address is the probes' trampoline: the real one is on the
	 * thread's shadow stack, found by the slot's address. */
	uintptr_t sp_adj;
	if (real_return(&ra, cfa + row->ra_off, &sp_adj))
		return -1;
	for (int i = 0; i < CP_NSAVED; i++) {
		unsigned reg = cp_saved_regs[i];
		uintptr_t at = 0;
		int ok = 0;

		v[i] = 0;
		switch (row->saved_how[i]) {
		case CP_REG_CFA:
			at = cfa + row->saved_off[i];
			break;
		case CP_REG_AT_REG:
			if (reg_value(rg, row->saved_reg[i], &base) < 0)
				break;
			at = base + row->saved_off[i];
			break;
		}
		/* A slot below sp was already popped (gcc's epilogues keep the save rule after
		 * the pop): the register holds the caller's value again. */
		if (row->saved_how[i] == CP_REG_SAME ||
		    ((row->saved_how[i] == CP_REG_CFA || row->saved_how[i] == CP_REG_AT_REG) &&
		     at && at < rg->r[CP_DW_RSP])) {
			v[i] = rg->r[reg];
			ok = UW_KNOWN(rg, reg);
		} else if (at) {
			ok = uw_read(w, at, &v[i]) == 0;
		}
		known |= (uint32_t)ok << reg;
	}
	for (int i = 0; i < CP_NSAVED; i++)
		rg->r[cp_saved_regs[i]] = v[i];
	rg->r[CP_DW_RSP] = cfa + sp_adj;
	rg->r[CP_DW_RIP] = ra;
	rg->known = known;
	return 0;
}

/* DWARF register number -> ucontext gregs index. */
static const int8_t dw_to_greg[CP_DW_NREGS] = {
    REG_RAX, REG_RDX, REG_RCX, REG_RBX, REG_RSI, REG_RDI, REG_RBP, REG_RSP, REG_R8,
    REG_R9,  REG_R10, REG_R11, REG_R12, REG_R13, REG_R14, REG_R15, REG_RIP,
};

static void regs_from_gregs(struct uw_regs *rg, const greg_t *g)
{
	for (int i = 0; i < CP_DW_NREGS; i++)
		rg->r[i] = (uintptr_t)g[dw_to_greg[i]];
	rg->known = (1u << CP_DW_NREGS) - 1;
}

/* Through __restore_rt: the kernel's ucontext sits at rsp. Switches the window when the
 * interrupted code ran on another stack (sigaltstack). */
static int step_signal(struct uw_window *w, struct uw_regs *rg)
{
	uintptr_t at = rg->r[CP_DW_RSP];
	uintptr_t first = at + offsetof(ucontext_t, uc_mcontext.gregs[0]);
	uintptr_t last = at + offsetof(ucontext_t, uc_mcontext.gregs[NGREG - 1]);
	uintptr_t dummy;

	if (uw_read(w, first, &dummy) < 0 || uw_read(w, last, &dummy) < 0)
		return -1;
	regs_from_gregs(rg, ((const ucontext_t *)(at + w->delta))->uc_mcontext.gregs);
	if (rg->r[CP_DW_RSP] < w->lo || rg->r[CP_DW_RSP] >= w->hi)
		return uw_window_for(w, rg->r[CP_DW_RSP]);
	return 0;
}

/* Finds the caller of the frame in rg; returns how (CP_HOW_NONE: no caller). */
static uint32_t step(struct uw_window *w, struct uw_regs *rg, const struct cp_cfi_row *row,
		     uint32_t *kind)
{
	*kind = CP_FRAME_RETURN;
	switch (row->kind) {
	case CP_ROW_SIGNAL:
		*kind = CP_FRAME_SIGNAL;
		return step_signal(w, rg) == 0 ? CP_HOW_SIGNAL : CP_HOW_NONE;
	case CP_ROW_NORMAL:
		return step_cfi(w, rg, row) == 0 ? CP_HOW_CFI : CP_HOW_NONE;
	case CP_ROW_OUTERMOST:
		return CP_HOW_NONE;
	default: /* no CFI, or CFI we cannot evaluate */
		if (uw_step_fp(w, rg) == 0)
			return CP_HOW_FP;
		if (uw_step_scan(w, rg) == 0)
			return CP_HOW_SCAN;
		return CP_HOW_NONE;
	}
}

/* Output of one unwind. Every frame is emitted with how = CP_HOW_CFI (the common case);
 * a step by other means overwrites it, and the frame the walk ends on gets CP_HOW_NONE. */
struct uw_out {
	struct cp_frame *f;
	int n, max;
	int found; /* callers found (frames beyond the starting one) */
};

static inline void emit(struct uw_out *o, uintptr_t pc, uint32_t kind)
{
	o->f[o->n].pc = pc;
	o->f[o->n].kind = kind;
	o->f[o->n].how = CP_HOW_CFI;
	o->n++;
}

/* The hot path's callee-saved registers: only rbx and rbp (cp_saved_regs[0..1]) are ever
 * CFA bases in practice (checked over libc, ld.so, libm, libstdc++, libdw: rsp, rbp, rbx,
 * and caller-saved registers in frame 0 only), so r12-r15 are dropped here. Returns the
 * updated `known` mask. */
static inline uint32_t hot_saved_regs(struct uw_regs *rg, uint64_t w2, uintptr_t cfa, uintptr_t sp,
				      const struct uw_window *w, uint32_t known)
{
	known &= ~HOT_UNTRACKED;
	for (unsigned hows = W2_HOWS(w2) & 0xf; hows;) { /* rules other than "same" */
		unsigned i = (unsigned)__builtin_ctz(hows) >> 1, reg = cp_saved_regs[i];
		unsigned how = (hows >> (2 * i)) & 3;
		uintptr_t at = cfa + W2_OFF8(w2, i) * 8;
		hows &= ~(3u << (2 * i));
		if (at < sp) /* already popped: the register holds the value */
			continue;
		if (how == 2 || at - w->lo > w->span)
			known &= ~(1u << reg);
		else
			rg->r[reg] = *(const uintptr_t *)(at + w->delta);
	}
	return known;
}

/* The hot path: consecutive frames whose cached recipe has R_FAST, applied from the
 * packed form with pc/sp kept in registers. Returns when a frame needs the general path
 * (state left at that frame), 1 if the walk must stop. */
static int run_packed(const struct uw_window *w, struct uw_regs *rg, struct uw_out *o,
		      uint32_t *kind)
{
	/* Locals, so that the frame stores below cannot force reloads (they may alias). */
	const uintptr_t span = w->span, lo8 = w->lo + 8;
	const intptr_t delta = w->delta;
	struct cache_slot *const table = cache;
	uintptr_t pc = rg->r[CP_DW_RIP], sp = rg->r[CP_DW_RSP];
	uint32_t known = rg->known;
	uint64_t key = (pc << 1) - (*kind == CP_FRAME_RETURN);
	struct cp_frame *f = o->f + o->n, *end = o->f + o->max;
	int stop = 0;

	while (f < end) {
		struct cache_slot *s = (struct cache_slot *)((char *)table + cache_offset(key));
		uint64_t c = __atomic_load_n(&s->check, __ATOMIC_RELAXED);
		uint64_t w1 = __atomic_load_n(&s->w1, __ATOMIC_RELAXED);
		uint64_t rest = __atomic_load_n(&s->w2, __ATOMIC_RELAXED);
		uintptr_t cfa, ra, sp_adj;

		if (!(w1 & R_FAST) || (key ^ w1 ^ ((rest << 29) | (rest >> 35))) != c)
			break;
		if (w1 & R_FAST_RSP) {
			cfa = sp + W1_CFA_OFF(w1);
		} else {
			unsigned reg = W1_CFA_REG(w1);
			if (!((known >> reg) & 1))
				break;
			cfa = rg->r[reg] + W1_CFA_OFF(w1);
			if (cfa <= sp)
				break;
		}
		if (cfa - lo8 > span) /* the RA slot, CFA - 8, is readable */
			break;
		ra = *(const uintptr_t *)(cfa - 8 + delta);
		if (real_return(&ra, cfa - 8, &sp_adj)) {
			stop = 1;
			break;
		}
		if (ra < 4096) {
			stop = 1;
			break;
		}
		known = hot_saved_regs(rg, rest, cfa, sp, w, known);
		f->pc = ra;
		f->kind = CP_FRAME_RETURN;
		f->how = CP_HOW_CFI;
		f++;
		pc = ra;
		sp = cfa + sp_adj;
		key = (pc << 1) - 1;
	}
	if (f != o->f + o->n) {
		*kind = CP_FRAME_RETURN;
		o->found += (int)(f - o->f) - o->n;
		o->n = (int)(f - o->f);
	}
	rg->r[CP_DW_RIP] = pc;
	rg->r[CP_DW_RSP] = sp;
	rg->known = known | (1u << CP_DW_RIP) | (1u << CP_DW_RSP);
	return stop;
}

/* The general path for the current frame (the last one emitted, or the unreported
 * starting frame when o->n == 0). Returns 1 when the walk is over (status set), 0 after a
 * step to the caller (emitted). */
static int step_general(struct uw_window *w, struct uw_regs *rg, struct uw_out *o, uint32_t *kind,
			enum cp_unwind_status *status)
{
	uintptr_t pc = rg->r[CP_DW_RIP];
	int exact = *kind != CP_FRAME_RETURN;
	struct cp_cfi_row row;
	struct recipe rc;
	uint32_t how;

	if (cache && cache_get(lookup_key(pc, exact), &rc)) {
		if (W1_KIND(rc.w1) == CP_ROW_OUTERMOST) { /* the usual end: skip the unpacking */
			*status = CP_UNWIND_COMPLETE;
			return 1;
		}
		recipe_unpack(&rc, &row);
	} else {
		row_compute(pc, exact, &row);
	}
	if (row.kind == CP_ROW_OUTERMOST) {
		*status = CP_UNWIND_COMPLETE;
		return 1;
	}
	if (o->n >= o->max) {
		*status = CP_UNWIND_PARTIAL;
		return 1;
	}
	how = step(w, rg, &row, kind);
	if (how == CP_HOW_NONE || rg->r[CP_DW_RIP] < 4096) {
		*status = o->found ? CP_UNWIND_PARTIAL : CP_UNWIND_FAILED;
		return 1;
	}
	if (o->n > 0)
		o->f[o->n - 1].how = how;
	emit(o, rg->r[CP_DW_RIP], *kind);
	o->found++;
	return 0;
}

/* Unwinds from rg; the starting frame is reported unless skip_first. */
static int unwind_loop(struct uw_regs *rg, uint32_t kind, struct cp_frame *out, int max,
		       int skip_first, enum cp_unwind_status *status)
{
	struct uw_window w;
	struct uw_out o = {out, 0, max, 0};

	*status = CP_UNWIND_FAILED;
	pc_map_fn map = __atomic_load_n(&pc_map, __ATOMIC_ACQUIRE);
	if (map && UW_KNOWN(rg, CP_DW_RIP) && rg->r[CP_DW_RIP]) {
		uintptr_t sp_adj, pc = map(rg->r[CP_DW_RIP], kind == CP_FRAME_RETURN, &sp_adj);
		if (!pc) /* moved code with no original place */
			return 0;
		rg->r[CP_DW_RIP] = pc;
		rg->r[CP_DW_RSP] += sp_adj;
	}
	if (max <= 0 || !UW_KNOWN(rg, CP_DW_RIP))
		return 0;
	if (!skip_first)
		emit(&o, rg->r[CP_DW_RIP], kind);
	if (uw_window_for(&w, rg->r[CP_DW_RSP]) < 0) {
		if (o.n)
			o.f[0].how = CP_HOW_NONE;
		return o.n; /* nothing readable: frame 0 only */
	}
	for (;;) {
		if (cache && run_packed(&w, rg, &o, &kind)) {
			*status = o.found ? CP_UNWIND_PARTIAL : CP_UNWIND_FAILED;
			break;
		}
		if (step_general(&w, rg, &o, &kind, status))
			break;
	}
	if (o.n > 0)
		o.f[o.n - 1].how = CP_HOW_NONE;
	return o.n;
}

int cp_unwind_context(const ucontext_t *uc, struct cp_frame *out, int max,
		      enum cp_unwind_status *status)
{
	struct uw_regs rg;

	regs_from_gregs(&rg, uc->uc_mcontext.gregs);
	return unwind_loop(&rg, CP_FRAME_PC, out, max, 0, status);
}

__attribute__((noinline)) int cp_unwind_here(struct cp_frame *out, int max,
					     enum cp_unwind_status *status)
{
	struct uw_regs rg;
	uintptr_t rip, rsp, rbp;

	__asm__ volatile("lea 0(%%rip), %0\n\tmov %%rsp, %1\n\tmov %%rbp, %2"
			 : "=r"(rip), "=r"(rsp), "=r"(rbp));
	rg.r[CP_DW_RIP] = rip;
	rg.r[CP_DW_RSP] = rsp;
	rg.r[CP_DW_RBP] = rbp;
	rg.known = (1u << CP_DW_RIP) | (1u << CP_DW_RSP) | (1u << CP_DW_RBP);
	/* Frame 0 is this function (exact pc): walked, not reported. */
	return unwind_loop(&rg, CP_FRAME_PC, out, max, 1, status);
}

int cp_unwind_copy(const struct cp_unwind_copy *c, struct cp_frame *out, int max,
		   enum cp_unwind_status *status)
{
	struct uw_thread *t = uw_thread_self();
	struct uw_regs rg;
	int n;

	memcpy(rg.r, c->regs, sizeof(rg.r));
	rg.known = c->known & ((1u << CP_DW_NREGS) - 1);
	t->copy = 1;
	t->copy_lo = c->stack_addr;
	t->copy_hi = c->stack_addr + c->stack_len;
	t->copy_delta = (intptr_t)((uintptr_t)c->stack - c->stack_addr);
	n = unwind_loop(&rg, CP_FRAME_PC, out, max, 0, status);
	t->copy = 0;
	return n;
}
