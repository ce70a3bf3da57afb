/* Internal to the unwinder: register state, stack windows, recipes, fallbacks. */
#ifndef CP_RUNTIME_UNWIND_INTERNAL_H
#define CP_RUNTIME_UNWIND_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "runtime/unwind/cfi.h"
#include "runtime/unwind/unwind.h"

/* Registers of one frame, DWARF numbering; `known` has bit i set when r[i] is valid. */
struct uw_regs {
	uintptr_t r[CP_DW_NREGS];
	uint32_t known;
};

#define UW_KNOWN(rg, i) (((rg)->known >> (i)) & 1u)

/* Stack bounds of a thread, set outside signal context or lazily (AS-safe probe). */
struct uw_thread {
	uintptr_t stack_lo, stack_hi; /* the thread's stack mapping */
	uintptr_t alt_lo, alt_hi;     /* sigaltstack, if any */
	int inited;
	/* Unwinding a copy (cp_unwind_copy): the only readable stack is [copy_lo, copy_hi),
	 * held here at target address + copy_delta. */
	int copy;
	uintptr_t copy_lo, copy_hi;
	intptr_t copy_delta;
};

/* The readable window for the current stack segment: [lo, hi), hi - lo >= 8;
 * span = hi - lo - 8, so that one unsigned compare checks a whole 8-byte read. The bytes
 * of address a are at a + delta here (0 for the live stack, the copy's offset otherwise). */
struct uw_window {
	uintptr_t lo, hi, span;
	intptr_t delta;
	struct uw_thread *t;
};

/* Thread state of the calling thread (initial-exec TLS). */
struct uw_thread *uw_thread_self(void);
/* The recipe cache's table (unwind.c): its size, whether it is mapped, and mapping it
 * (unwind-init.c, at init). */
size_t uw_cache_bytes(void);
int uw_cache_ready(void);
void uw_cache_install(void *table);
/* The dynamic loader's start-up code [lo, hi) (unwind.c; set at init, unwind-init.c). */
void uw_loader_start_install(uintptr_t lo, uintptr_t hi);
/* Sets t's sigaltstack bounds (none: 0, 0). */
void uw_query_altstack(struct uw_thread *t);
/* Sets w to the segment holding sp (thread stack, sigaltstack or a probed mapping);
 * 0 on success, -1 if sp is nowhere we can read. */
int uw_window_for(struct uw_window *w, uintptr_t sp);

static inline int uw_read(const struct uw_window *w, uintptr_t addr, uintptr_t *out)
{
	if (addr - w->lo > w->span)
		return -1;
	*out = *(const uintptr_t *)(addr + w->delta);
	return 0;
}

/* Fallbacks when CFI is missing. Return 0 and update rg, or -1. */
int uw_step_fp(const struct uw_window *w, struct uw_regs *rg);
int uw_step_scan(const struct uw_window *w, struct uw_regs *rg);
/* A word that points into known text right after a call instruction? */
int uw_is_return_address(uintptr_t ra);

#endif
