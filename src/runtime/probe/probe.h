/* Entry/exit probes on selected functions (`callpath probe`), internal to the runtime.
 *
 *   CALLPATH_PROBES=PAT[;PAT...]   PAT = GLOB or MODULE-GLOB:GLOB (module matched against
 *                                  the file name of each load module's path; GLOB against
 *                                  mangled and demangled names: src/patch/select.h)
 *   CALLPATH_PROBE_METRICS=cputime also the exclusive thread CPU time (probe-cputime)
 * A PAT starting with '+' selects (CATCH's --select: measure only while such a function is
 * active on the thread), one starting with '-' filters (nothing is measured inside such a
 * function's activation); both are probed themselves.
 *
 * Each matching function of the executable and of every shared library (also those
 * dlopen'd later) gets its entry patched (src/patch) to jump to cp_probe_entry (entry.S),
 * which calls cp_probe_enter: a per-thread shadow-stack push, the return address replaced
 * by cp_probe_return. The calling context comes from the thread's CCT: a context cache
 * keyed by (parent probed context, call site, stack position) answers repeated calls with
 * one hash lookup; a miss walks the stack with the runtime's unwinder once. The probed
 * function is a PC node at its entry address under the node of its call; "calls" counts
 * entries there and "probe-time" holds the activation's exclusive wall time (TSC), so
 * subtree sums are each probed function's inclusive time. docs/cmd-probe.md.
 *
 * Module probe/ (public: probe.h; probe-internal.h, probe-hot.h private): above unwind/
 * and cct/, below core/, which configures and drives it; uses patch/ and the shared state
 * (core/runtime.h). */
#ifndef CP_RUNTIME_PROBE_H
#define CP_RUNTIME_PROBE_H

#include "patch/patch.h"
#include "patch/select.h"

#include <stddef.h>
#include <stdint.h>

/* Registers saved by cp_probe_entry (r11 by the stub), lowest address first; ra is the
 * return-address slot of the probed call. */
struct cp_probe_regs {
	uint64_t r15, r14, r13, r12, rbp, rbx, r10, r9, r8, rcx, rdx, rsi, rdi, rax, r11;
	uint64_t ra;
};

/* The roles patterns give (src/patch/select.h). */
enum {
	CP_PROBE_MEASURE = CP_PATCH_ROLE_MEASURE,
	CP_PROBE_SELECT = CP_PATCH_ROLE_SELECT,
	CP_PROBE_FILTER = CP_PATCH_ROLE_FILTER
};

struct cp_probe {
	uint64_t tramp;	 /* the trampoline: the function's moved prologue (first: entry.S) */
	uint64_t addr;	 /* runtime entry address */
	uint64_t offset; /* ELF virtual address in its module */
	uint32_t module; /* module id */
	uint32_t index;
	uint32_t role; /* CP_PROBE_MEASURE | CP_PROBE_SELECT | CP_PROBE_FILTER */
	struct cp_patch patch;
};

/* Configuration (config.c): registers the "calls" and "probe-time" metrics. 0 or -1. */
int cp_probe_config(const char *spec);
/* True when probes were configured. */
int cp_probe_enabled(void);
/* After the module registry is synchronised (init, dlopen): patches the matching
 * functions of modules not seen before. concurrent: other threads may run. Not AS-safe. */
void cp_probe_sync(int concurrent);
/* At exit: a note with the number of functions probed and refused (the refusals have a
 * note each, with the reason). Not AS-safe. */
void cp_probe_notes(void);
/* Fork child: the forking thread's shadow stack survives its new thread state (its
 * frames still return through cp_probe_return) but names nodes of the parent's CCT, so
 * it records nothing. Called before the thread state is dropped / after the new one. */
void cp_probe_before_fork_forget(void);
void cp_probe_after_fork(void);

/* Control (exported for the automated search's control channel, and for tests): install
 * the probes of one pattern (GLOB or MODULE:GLOB, same syntax as CALLPATH_PROBES) in every
 * module loaded now and in later dlopens / remove them again (entries restored; calls in
 * flight finish normally). Return the number of functions changed, or -1 when probes are
 * not enabled (no CALLPATH_PROBES) or the pattern is empty. Not async-signal-safe; safe
 * while other threads run (docs/internals/patch.md). */
int callpath_probe_insert(const char *pattern) __attribute__((visibility("default")));
int callpath_probe_remove(const char *pattern) __attribute__((visibility("default")));
/* Both, for the control channel (core/control.c): also the number of matching functions
 * refused and, in why (cap bytes, may be 0), the first refusal's reason. */
int cp_probe_control(const char *pattern, int remove, int *refused, char *why, size_t cap)
    __attribute__((visibility("hidden")));
/* Loop probes (probe/loop-install.c: the request format): relocates a probed function
 * with snippets on its loops' edges. The number of loops, or -1; why (cap bytes) gets the
 * reason, or on success "LOOPS<TAB>EDGES". arg is modified. */
int cp_probe_loops(char *arg, char *why, size_t cap) __attribute__((visibility("hidden")));
/* fork: probe_lock around the fork (the control thread may hold it). */
void cp_probe_fork_prepare(void) __attribute__((visibility("hidden")));
void cp_probe_fork_parent(void) __attribute__((visibility("hidden")));
void cp_probe_fork_child(void) __attribute__((visibility("hidden")));

/* entry.S */
void cp_probe_entry(void);
void cp_probe_return(void);

/* For the unwinder (async-signal-safe): the real return address of the probed call whose
 * return-address slot is at `slot` (it holds cp_probe_return), from the calling thread's
 * shadow stack; 0 when no frame of that slot is there (the walk then stops: partial). */
uintptr_t cp_probe_real_ra(uintptr_t slot) __attribute__((visibility("hidden")));

#endif
