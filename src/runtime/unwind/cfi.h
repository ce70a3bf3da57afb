/* Internal to the unwinder: the .eh_frame CFI reader and its row model.
 *
 * Everything here is async-signal-safe (reads mapped module memory only) except
 * cp_cfi_prepare, which runs at module-load time. */
#ifndef CP_RUNTIME_UNWIND_CFI_H
#define CP_RUNTIME_UNWIND_CFI_H

#include <stddef.h>
#include <stdint.h>

#include "runtime/unwind/modules.h"

/* DWARF register numbers on x86-64. */
enum {
	CP_DW_RAX = 0,
	CP_DW_RDX = 1,
	CP_DW_RCX = 2,
	CP_DW_RBX = 3,
	CP_DW_RSI = 4,
	CP_DW_RDI = 5,
	CP_DW_RBP = 6,
	CP_DW_RSP = 7,
	CP_DW_RIP = 16, /* the return-address column */
	CP_DW_NREGS = 17,
};

/* Per-module view of .eh_frame_hdr, filled at load time (modules.c). */
struct cp_ehinfo {
	const uint8_t *hdr;   /* .eh_frame_hdr */
	const uint8_t *table; /* sorted (initial_loc, fde) pairs, datarel sdata4 */
	uint32_t count;	      /* 0: no usable binary-search table */
};

/* How the CFA is computed. */
enum cp_cfa_how {
	CP_CFA_REG = 0,	  /* CFA = reg + off */
	CP_CFA_DEREF = 1, /* CFA = *(reg + off)      (gcc's realigned-stack frames) */
	CP_CFA_PLT = 2,	  /* CFA = rsp + off + ((rip & 15) >= plt_thr ? 8 : 0)  (PLT stubs) */
};

/* How a saved register (RA, rbp) is recovered. */
enum cp_reg_how {
	CP_REG_SAME = 0,   /* unchanged (also: no rule given) */
	CP_REG_CFA = 1,	   /* saved at CFA + off */
	CP_REG_UNDEF = 2,  /* undefined (RA undefined = outermost frame) */
	CP_REG_AT_REG = 3, /* saved at *(reg + off)  (DW_CFA_expression: bregN off) */
	CP_REG_OTHER = 4,  /* a rule we do not evaluate (register, val_*, long expression) */
};

/* Row kinds. */
enum cp_row_kind {
	CP_ROW_NONE = 0, /* no CFI covers this pc */
	CP_ROW_NORMAL = 1,
	CP_ROW_SIGNAL = 2,	/* pc is a signal trampoline (__restore_rt): ucontext at rsp */
	CP_ROW_OUTERMOST = 3,	/* RA undefined: _start, clone, thread start */
	CP_ROW_UNSUPPORTED = 4, /* CFI exists but uses rules we do not evaluate */
};

/* The callee-saved registers the unwinder tracks (rbx, rbp, r12-r15): CFA rules may be
 * based on any of them (glibc's _dl_runtime_resolve uses rbx, realigned frames rbp). */
#define CP_NSAVED 6
static const uint8_t cp_saved_regs[CP_NSAVED] = {3, 6, 12, 13, 14, 15};

/* One CFI row, reduced to what the unwinder needs. */
struct cp_cfi_row {
	uint8_t kind; /* enum cp_row_kind */
	uint8_t cfa_how;
	uint8_t cfa_reg;
	uint8_t plt_thr;
	int32_t cfa_off;
	uint8_t ra_how; /* enum cp_reg_how */
	int32_t ra_off;
	uint8_t saved_how[CP_NSAVED]; /* enum cp_reg_how, for cp_saved_regs[i] */
	uint8_t saved_reg[CP_NSAVED]; /* base register for CP_REG_AT_REG */
	int32_t saved_off[CP_NSAVED];
	uintptr_t lo, hi; /* pc range this row covers (runtime addresses) */
};

/* Fills m's unwind view (load time). */
void cp_cfi_prepare(const struct cp_module *m, struct cp_ehinfo *info);

/* The row for pc in module m (pc exact: the caller subtracts 1 from return addresses).
 * Returns 0 and fills row (kind NONE if no FDE covers pc), negative on malformed CFI. */
int cp_cfi_find_row(const struct cp_module *m, uintptr_t pc, struct cp_cfi_row *row);

/* The pc range [*begin, *end) of the FDE covering pc in module m (runtime addresses): 0,
 * or -1 when no FDE covers pc. The probes size functions that have no symbol by it. */
int cp_cfi_fde_range(const struct cp_module *m, uintptr_t pc, uintptr_t *begin, uintptr_t *end);

/* Sigreturn trampoline bytes at pc (mov $15,%rax; syscall)? pc must lie in module text. */
int cp_cfi_is_sigreturn(const struct cp_module *m, uintptr_t pc);

/* The FDEs of an .eh_frame section (mapped at eh_frame), at most cap: for an image that
 * has no .eh_frame_hdr (static executables), whose search table is then built from them. */
struct cp_cfi_fde {
	uintptr_t begin; /* initial location */
	const uint8_t *fde;
};
size_t cp_cfi_fde_list(const uint8_t *eh_frame, size_t size, struct cp_cfi_fde *out, size_t cap);

/* Forgets every cached recipe (after a module was unloaded; outside signal context). */
void cp_unwind_cache_flush(void);

#endif
