/* Whole-function relocation with instrumentation on control-flow edges (Paradyn's loop
 * instrumentation points, paper §4; docs/internals/patch.md "Loop probes").
 *
 * The function's instructions are copied, in order, into memory near it; every direct
 * branch is widened to rel32 and re-aimed inside the copy, RIP-relative operands keep
 * their absolute targets. At each requested edge a snippet calls `handler` with the
 * edge's cookie in r11 (all other registers and the flags preserved; the snippet skips
 * the red zone first):
 *   - the taken edge of a conditional jump: the jump goes to an out-of-line stub
 *     (snippet, then jmp to the target's place in the copy or outside);
 *   - a fall-through edge (jcc not taken, a block that runs into the next): the snippet
 *     sits between the two instructions, after the place other branches reach;
 *   - the edge of an unconditional transfer (jmp, ret): the snippet sits before it.
 * Indirect jumps keep their targets (jump tables point into the original, which still
 * runs correctly uninstrumented); edges out of them are refused.
 *
 * Because the copy has room for anything, this works where blocks are too short for a
 * jump of their own (a 2-byte jcc, a loop of three instructions). The caller redirects
 * the function's entry to the copy; threads already inside the original finish there.
 * No malloc (static scratch under a mutex): usable in the preloaded runtime. */
#ifndef CP_PATCH_RELOCATE_FN_H
#define CP_PATCH_RELOCATE_FN_H

#include <stddef.h>
#include <stdint.h>

#define CP_RELOC_MAX_INSNS 8192
#define CP_RELOC_MAX_POINTS 1024

enum cp_reloc_edge {
	CP_RELOC_TAKEN = 1,	  /* a jcc's taken edge, or the edge of a jmp/ret */
	CP_RELOC_FALLTHROUGH = 2, /* to the next instruction */
};

struct cp_reloc_point {
	uint64_t src;	 /* address of the instruction the edge leaves */
	uint8_t edge;	 /* enum cp_reloc_edge */
	uint64_t cookie; /* in r11 when handler runs */
};

/* Where each piece of the copy came from, for unwinding through it and attributing its
 * pcs: entry i covers copy + at[i] (CP_RELOC_LEN(info[i]) bytes), in increasing order of
 * at. A relocated instruction came from addr + orig[i] (CP_RELOC_OLEN(info[i]) bytes
 * there); a snippet (CP_RELOC_SNIPPET set) stands for the original instruction at
 * addr + orig[i] whose stack state it has: the jcc or jmp/ret its edge leaves, or for a
 * fall-through edge the instruction after it. The caller gives arrays of cap entries
 * (cap >= instructions + points, or the map is left empty). */
#define CP_RELOC_SNIPPET (1u << 31)
#define CP_RELOC_LEN(info) ((info)&0xffffu)
#define CP_RELOC_OLEN(info) (((info) >> 16) & 0xffu)
struct cp_reloc_map {
	uint32_t *at, *orig, *info;
	size_t cap, n;
};

/* A pc `into` bytes inside a snippet: how far below the function's own stack pointer the
 * snippet has moved rsp there (is_return: pc is the return address of the snippet's
 * call, the only one a frame can hold). -1 where no caller frame can be found. Pure. */
int cp_reloc_snippet_sp(uint32_t into, int is_return);

struct cp_reloc_result {
	uint64_t copy; /* the copy's entry */
	size_t len;
	struct cp_reloc_map map; /* filled when its arrays are set */
	const char *why;	 /* when refused: the reason */
	uint64_t bad;		 /* and the instruction */
};

/* Relocates the function of size bytes at addr, whose original bytes are `code` (the
 * live ones may have an entry jump written over them), with the points. res->map's arrays
 * (may be NULL) are the caller's. 0, or a CP_PATCH_* status with res->why set. */
int cp_reloc_function(const uint8_t *code, uint64_t addr, size_t size,
		      const struct cp_reloc_point *pts, size_t npts, uint64_t handler,
		      struct cp_reloc_result *res);

#endif
