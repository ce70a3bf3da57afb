/* The patch engine: redirect a function's entry to a per-function stub, with the
 * overwritten prologue relocated into a trampoline so the original code still runs.
 *
 *   entry:  jmp rel32 stub                 (5 bytes written over the first instructions)
 *   stub:   push %r11                      (the caller may keep a value in r11 across
 *           movabs $cookie, %r11            the call: GCC's IPA-RA knows which registers
 *           jmp handler                     a callee clobbers)
 *   tramp:  <relocated prologue>           (cp_x86_relocate: RIP-relative operands
 *           jmp entry + n                   re-aimed, short branches widened)
 *
 * The handler (the caller's, e.g. the probe runtime's assembly entry) finds the cookie in
 * r11 and the caller's r11 at (%rsp), the return address at 8(%rsp); it must restore r11,
 * drop that word and continue at the trampoline with every other register unchanged. Stubs and
 * trampolines live in executable pages mapped within +-1 GiB of the function, so both jumps are
 * rel32.
 *
 * Functions that cannot be patched exactly are refused with a reason (enum cp_patch_status),
 * never patched wrongly. Preparing and committing are separate so the caller can publish the
 * trampoline address in its cookie before the entry jump becomes visible to other threads.
 * docs/internals/patch.md explains the cross-modifying-code protocol.
 *
 * Links only cp_arch and libc: the preloaded runtime uses it. No malloc; a mutex serialises
 * prepare/commit/revert (never call them from a signal handler). */
#ifndef CP_PATCH_PATCH_H
#define CP_PATCH_PATCH_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define CP_PATCH_JMP_LEN 5
#define CP_PATCH_MAX_INSNS 8

enum cp_patch_status {
	CP_PATCH_OK = 0,
	CP_PATCH_TOO_SHORT,	 /* fewer than 5 bytes of whole instructions in the function */
	CP_PATCH_JUMP_INTO,	 /* a branch of the function lands inside the patched bytes */
	CP_PATCH_IFUNC,		 /* an IFUNC symbol (its value is a resolver run once) */
	CP_PATCH_PLT,		 /* a PLT stub, not a function */
	CP_PATCH_NOT_EXEC,	 /* not in an executable section/mapping */
	CP_PATCH_UNSUPPORTED,	 /* a prologue instruction cannot be relocated exactly */
	CP_PATCH_UNDECODABLE,	 /* the function's bytes do not decode */
	CP_PATCH_NO_NEAR_MEMORY, /* no free address range within reach of the function */
	CP_PATCH_STRADDLE, /* no longer returned (the breakpoint-first write needs no alignment) */
	CP_PATCH_ALREADY,  /* the entry already jumps into our stubs */
	CP_PATCH_PROTECT,  /* mprotect refused to make the code writable */
	CP_PATCH_NOT_FUNC, /* not a function symbol, or its size is unknown */
	CP_PATCH_RETURNS_TWICE, /* setjmp, vfork, getcontext...: they keep their return address */
	CP_PATCH_NO_CALLER,	/* the program's entry point: entered without a call */
	CP_PATCH_BUSY,		/* a thread stays stopped inside the entry, or does not answer */
	CP_PATCH_NO_FDE, /* sub_HEX: no .eh_frame FDE starts there to give the function's size */
	CP_PATCH_NSTATUS
};

/* A short reason for users ("prologue instruction cannot be relocated"). */
const char *cp_patch_status_str(int status);

/* Classifies an ELF symbol before looking at code: st_type is ELF64_ST_TYPE(st_info),
 * section the name of the section holding it (may be NULL), exec whether that section is
 * executable. */
int cp_patch_check_symbol(unsigned st_type, uint64_t size, const char *section, int exec);
/* Refuses by name the functions whose return address must stay theirs: they return twice
 * or save it for a later jump (setjmp family, vfork, getcontext, clone), or are signal
 * return stubs (__restore_rt): CP_PATCH_RETURNS_TWICE; and _start, which the kernel enters
 * without a return address: CP_PATCH_NO_CALLER. Else CP_PATCH_OK. */
int cp_patch_check_name(const char *name);

/* What patching a function moves. */
struct cp_patch_plan {
	uint64_t addr;
	uint8_t n; /* bytes of whole instructions overwritten/moved (>= 5) */
	uint8_t ninsn;
	uint8_t off[CP_PATCH_MAX_INSNS + 1];  /* instruction starts in the original, off[ninsn]=n */
	uint8_t roff[CP_PATCH_MAX_INSNS + 1]; /* their starts in the trampoline */
	uint8_t bad_insn;		      /* for UNSUPPORTED/UNDECODABLE: the offending one */
	uint64_t bad_addr;		      /* JUMP_INTO: the branch; UNDECODABLE: where */
};

/* Decides whether the function whose `size` bytes at `code` run at `addr` can be patched.
 * Scans the whole function for direct branches into bytes 1..n-1 of the moved prologue
 * (indirect jumps are not seen). Pure: usable offline on a file's bytes. */
int cp_patch_plan(const uint8_t *code, size_t size, uint64_t addr, struct cp_patch_plan *plan);

/* Builds the relocated prologue of `plan` (code = the function's current bytes) as if placed
 * at tramp_addr, followed by the jump back; out must hold CP_PATCH_MAX_TRAMP bytes. Returns
 * the length, or 0 when a displacement does not reach from tramp_addr. */
#define CP_PATCH_MAX_TRAMP (CP_PATCH_MAX_INSNS * 24 + CP_PATCH_JMP_LEN)
unsigned cp_patch_build_trampoline(const struct cp_patch_plan *plan, const uint8_t *code,
				   uint64_t tramp_addr, uint8_t *out);

/* One installed (or prepared) patch. */
struct cp_patch {
	uint64_t addr;
	uint64_t stub;
	uint64_t trampoline;
	uint8_t saved[CP_PATCH_JMP_LEN]; /* original entry bytes */
	uint8_t n;
	uint8_t committed;
};

/* Plans the function at addr (its size bytes are mapped and readable), builds stub and
 * trampoline near it. Nothing is visible to the program yet. */
int cp_patch_prepare(uint64_t addr, size_t size, uint64_t handler, uint64_t cookie,
		     struct cp_patch *p);
/* Writes the entry jump. `concurrent`: other threads may be running (then the
 * breakpoint-first protocol below is used, which needs cp_patch_set_pc_query). */
int cp_patch_commit(struct cp_patch *p, int concurrent);
/* Restores the entry bytes (the stub and trampoline stay mapped: a thread may be in them). */
int cp_patch_revert(struct cp_patch *p, int concurrent);

/* Writing into running code (poke.c, docs/internals/patch.md): int3 at byte 0, every core
 * synchronised; when `check`, waits until no thread's pc is inside bytes 1..4 (bounded:
 * CP_PATCH_BUSY, byte 0 restored); bytes 1..4, sync; byte 0, sync. A thread meeting the
 * int3 continues at `target` (cp_patch_trap). The page must be writable. */
int cp_patch_poke(uint64_t addr, const uint8_t *bytes, uint64_t target, int check);
/* The caller's SIGTRAP handler calls this first: 1 when the trap was one of our
 * breakpoints (the context now continues at its target), 0 when it is someone else's.
 * Async-signal-safe. */
int cp_patch_trap(void *ucontext);
/* How to ask thread `tid` for its pc: send it a signal whose handler calls
 * cp_patch_pc_report with its context. Returns 0, or -1 when the thread is gone. */
void cp_patch_set_pc_query(int (*ask)(pid_t tid));
void cp_patch_pc_report(const void *ucontext); /* async-signal-safe */
/* Registers for membarrier SYNC_CORE (call once at start, before threads exist). */
void cp_patch_sync_init(void);

/* len bytes of executable memory within +-1 GiB of addr (the stub pools), 0 when none. */
uint64_t cp_patch_alloc_near(uint64_t addr, uint32_t len);
/* Writes len bytes there (the pages stay executable). 0 or CP_PATCH_PROTECT. */
int cp_patch_fill(uint64_t at, const void *bytes, size_t len);

/* True when addr lies in memory the engine mapped for stubs and trampolines. */
int cp_patch_owns(uint64_t addr);

#endif
