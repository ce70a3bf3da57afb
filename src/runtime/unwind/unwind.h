/* The unwinder: a sampled thread's calling context from a signal's ucontext.
 *
 * Async-signal-safe: no malloc, no locks, no libc calls that are not AS-safe. Every read
 * of the stack is checked against the thread's stack bounds (cp_unwind_thread_init) or
 * the signal stack; a read outside ends the unwind as partial, never faults.
 * CFI (.eh_frame via .eh_frame_hdr) first, with per-address recipes cached; frame pointer
 * and validated stack scanning only as fallbacks.
 *
 * Module unwind/ (public: unwind.h, modules.h, cfi.h; *-internal.h private): below
 * sample/, probe/ and core/, uses cct/ and base/sigsafe only. It knows nothing of the
 * probes: their trampoline is registered with cp_unwind_set_return_hook. */
#ifndef CP_RUNTIME_UNWIND_H
#define CP_RUNTIME_UNWIND_H

#include <stddef.h>
#include <stdint.h>
#include <ucontext.h>

enum cp_unwind_status {
	CP_UNWIND_COMPLETE = 0, /* reached the outermost frame (_start / clone / RA undefined) */
	CP_UNWIND_PARTIAL = 1,	/* some callers found, then stopped (no CFI, bad read, depth) */
	CP_UNWIND_FAILED = 2,	/* no caller found at all */
};

enum cp_frame_kind {
	CP_FRAME_PC = 0,     /* the interrupted instruction (frame 0) */
	CP_FRAME_RETURN = 1, /* a return address */
	CP_FRAME_SIGNAL = 2, /* an interrupted PC found through a signal frame (exact) */
	CP_FRAME_REGION = 3, /* an OpenMP region: pc is its outlined function (omp/omp.h) */
	CP_FRAME_TASK = 4,   /* an OpenMP task: pc is its task function */
	CP_FRAME_IDLE = 5,   /* an idle OpenMP worker, under the master's serial context */
};

/* How a frame's caller was found (cp_frame.how). */
enum cp_unwind_how {
	CP_HOW_NONE = 0,   /* no caller (last frame) */
	CP_HOW_CFI = 1,	   /* .eh_frame CFI */
	CP_HOW_FP = 2,	   /* frame-pointer chain (no CFI for this pc) */
	CP_HOW_SCAN = 3,   /* stack scan for a validated return address */
	CP_HOW_SIGNAL = 4, /* the ucontext of a signal frame (__restore_rt) */
};

struct cp_frame {
	uintptr_t pc;
	uint32_t kind; /* enum cp_frame_kind */
	uint32_t how;  /* enum cp_unwind_how: how this frame's caller was found */
};

/* Once per process, outside signal context (allocates the recipe caches). */
int cp_unwind_init(void);
/* Return addresses equal to `trampoline` were replaced (the probes' exit trampoline): the
 * unwinder asks real_ra(slot address) for the real one (AS-safe; 0 if unknown). Set once
 * at init, before sampling starts, by the module above that owns the trampoline. */
void cp_unwind_set_return_hook(uintptr_t trampoline, uintptr_t (*real_ra)(uintptr_t slot));
/* Code moved elsewhere (loop probes' relocated functions, probe/): map(pc, is_return,
 * &sp_adj) gives the original place of a pc in moved code, pc itself elsewhere, 0 where
 * no original exists (the walk stops). Code added in the copy (a snippet) maps to the
 * original instruction whose stack state it has, less the sp_adj bytes it pushed (the
 * unwinder adds them to rsp; 0 elsewhere); for a return address into added code, to
 * that instruction + 1 (return addresses are looked up at ra - 1). Set once, outside
 * signal context; AS-safe map. */
void cp_unwind_set_pc_map(uintptr_t (*map)(uintptr_t pc, int is_return, uintptr_t *sp_adj));
/* A return address as the unwinder reports it: its original place when it is in moved
 * code (what frames[].pc holds for it), ra itself elsewhere. Callers that look for their
 * own call site among the frames (the synchronous triggers) map theirs first. AS-safe. */
uintptr_t cp_unwind_map_return(uintptr_t ra);
/* Once per thread, outside signal context if possible (pthread_getattr_np). The AS-safe
 * variant, for threads first seen in a signal handler, takes the run of readable pages
 * above sp as the stack (probed with process_vm_readv on ourselves, no /proc parsing);
 * cp_unwind_context calls it itself for a thread that has not been initialized. */
void cp_unwind_thread_init(void);
void cp_unwind_thread_init_signal_safe(uintptr_t sp);
/* The calling thread's own stack [*lo, *hi), as the unwinder bounds its reads: 0, or -1
 * if the thread's bounds are not known yet. Async-signal-safe. */
int cp_unwind_stack(uintptr_t *lo, uintptr_t *hi);

/* Fills out[0..n) leaf first, returns n (>= 1 when the context has a PC). */
int cp_unwind_context(const ucontext_t *uc, struct cp_frame *out, int max,
		      enum cp_unwind_status *status);
/* Unwind from the caller's own frame (probes, synchronous triggers): out[0] is the return
 * address into the caller of cp_unwind_here (kind CP_FRAME_RETURN). Async-signal-safe. */
int cp_unwind_here(struct cp_frame *out, int max, enum cp_unwind_status *status);

/* The other driver (the kernel-copy sampler, offline, in the CLI): unwinds a thread of
 * another process from its registers and a copy of the top of its stack, reading nothing
 * else (the stack copy, and the images of cp_modules_add'ed modules). Bounds-checked like
 * a live unwind: a read outside [stack_addr, stack_addr + stack_len) ends the walk. */
struct cp_unwind_copy {
	uintptr_t regs[17];   /* DWARF numbering (rax=0 ... r15=15, rip=16) */
	uint32_t known;	      /* bit i: regs[i] is valid (rip and rsp are needed) */
	uintptr_t stack_addr; /* the target's address of stack[0]: its rsp */
	const void *stack;    /* the copy */
	size_t stack_len;
};
int cp_unwind_copy(const struct cp_unwind_copy *c, struct cp_frame *out, int max,
		   enum cp_unwind_status *status);

#endif
