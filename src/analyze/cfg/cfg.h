/* The control-flow graph of one procedure, recovered from its machine code.
 *
 * Input: the procedure's code (its main part and any split parts such as `.cold`
 * fragments, each with its bytes and link-time address range) and an oracle that answers
 * "is this address another procedure's entry?" (a jmp there is a tail call), "does a call
 * to this address never return?" (exit, abort, __stack_chk_fail, ...), and "read bytes at
 * this address" (jump tables in .rodata).
 *
 * Decoding is recursive traversal from the entry: only code reachable through direct
 * control flow and recognised jump tables is decoded. Blocks end at every branch, call,
 * return, trap, and before every branch target. Bounded work for any input: every byte
 * offset is decoded at most once, jump tables are capped, bad bytes end a block.
 *
 * Usage (reuse one cp_cfg across procedures; its arrays are recycled):
 *   struct cp_cfg cfg; cp_cfg_init(&cfg);
 *   for each procedure: cp_cfg_build(&cfg, parts, nparts, &oracle); ...use cfg...
 *   cp_cfg_release(&cfg);
 * See docs/internals/cfg.md. */
#ifndef CP_ANALYZE_CFG_H
#define CP_ANALYZE_CFG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CP_CFG_NONE UINT32_MAX /* "no block": the edge leaves the procedure */

/* One contiguous piece of the procedure: its link-time range and its bytes
 * (bytes[0] is the byte at lo; hi - lo bytes readable). parts[0] is the main part; its lo
 * is the entry point. */
struct cp_cfg_part {
	uint64_t lo, hi;
	const uint8_t *bytes;
};

struct cp_cfg_oracle {
	void *ctx;
	/* Is addr the entry of a procedure (any procedure, including this one's entry)?
	 * A jmp/jcc to another procedure's entry is a tail call. NULL: never. */
	bool (*is_entry)(void *ctx, uint64_t addr);
	/* Does a call to addr never return (exit, abort, __stack_chk_fail, a PLT stub of
	 * one, ...)? NULL: never. cp_cfg_noreturn_name() gives a default name list. */
	bool (*is_noreturn)(void *ctx, uint64_t addr);
	/* Copies up to len bytes at link-time address addr into buf; returns how many were
	 * readable. Used for jump tables. NULL: jump tables are not resolved. */
	size_t (*read)(void *ctx, uint64_t addr, void *buf, size_t len);
};

enum cp_cfg_edge_kind {
	CP_CFG_FALLTHROUGH = 0,	 /* no branch: the next block starts (a branch target) */
	CP_CFG_COND_TAKEN,	 /* jcc taken */
	CP_CFG_COND_NOT_TAKEN,	 /* jcc not taken (falls through) */
	CP_CFG_JUMP,		 /* unconditional direct jmp inside the procedure */
	CP_CFG_CALL_FALLTHROUGH, /* after a call that returns; target = callee (0: indirect) */
	CP_CFG_INDIRECT,	 /* jmp * resolved through a jump table */
	/* Edges that leave the procedure (dst == CP_CFG_NONE; target = where they go): */
	CP_CFG_TAILCALL,   /* jmp/jcc to another procedure's entry */
	CP_CFG_RETURN,	   /* ret */
	CP_CFG_NORETURN,   /* a call that does not return ends the block;
			    * target = callee */
	CP_CFG_UNRESOLVED, /* jmp * not resolved (also listed in cfg.unresolved) */
	CP_CFG_OUTSIDE,	   /* direct jmp/jcc/fallthrough to an address outside the
			    * procedure that is not an entry */
};

struct cp_cfg_edge {
	uint32_t src, dst; /* block indices; dst CP_CFG_NONE for the kinds that leave */
	uint64_t target;   /* destination address (callee for call edges; 0 if unknown) */
	uint8_t kind;	   /* enum cp_cfg_edge_kind */
};

enum {
	CP_CFG_BLOCK_ENTRY = 1 << 0,   /* contains the procedure entry */
	CP_CFG_BLOCK_BAD = 1 << 1,     /* ends at bytes that do not decode / leave the part */
	CP_CFG_BLOCK_TRAP = 1 << 2,    /* ends with hlt/ud2/int3 */
	CP_CFG_BLOCK_OVERLAP = 1 << 3, /* overlaps another block (jump into an insn) */
};

struct cp_cfg_block {
	uint64_t lo, hi;     /* [lo, hi): its instructions */
	uint32_t first_edge; /* out edges: edges[first_edge .. first_edge + nedges) */
	uint32_t nedges;
	uint32_t ninsns;
	uint32_t flags; /* CP_CFG_BLOCK_* */
	uint64_t last;	/* address of its last instruction */
};

/* A jump table that was resolved. */
struct cp_cfg_jtable {
	uint64_t jump;	    /* address of the jmp * */
	uint64_t table;	    /* address of the table */
	uint32_t entries;   /* number of entries read (bound from the cmp/ja guard) */
	uint8_t entry_size; /* 4 (PIC, relative to table) or 8 (absolute) */
};

struct cp_cfg {
	/* Sorted by lo. Block `entry` holds the procedure entry (not necessarily block 0: a
	 * .cold part may lie below the main part). */
	struct cp_cfg_block *blocks;
	size_t nblocks;
	/* Grouped by src (in block order), CP_CFG_COND_TAKEN before NOT_TAKEN. */
	struct cp_cfg_edge *edges;
	size_t nedges;
	uint32_t entry;
	uint64_t *unresolved; /* addresses of indirect jumps not resolved */
	size_t nunresolved;
	struct cp_cfg_jtable *jtables; /* sorted by jump address */
	size_t njtables;
	size_t ninsns; /* instructions decoded */
	size_t nbad;   /* places where decoding failed */

	/* private: allocation sizes and reusable scratch */
	size_t blocks_alloc, edges_alloc, unresolved_alloc, jtables_alloc;
	struct cp_cfg_scratch *scratch;
};

void cp_cfg_init(struct cp_cfg *cfg);
void cp_cfg_release(struct cp_cfg *cfg);
/* Builds the CFG of the procedure made of parts[0..nparts) (parts[0].lo = entry).
 * Replaces the previous contents of cfg. Returns 0, or CP_EINVAL for no parts / an empty
 * main part. Garbage code is not an error: it shows as BAD blocks and nbad. */
int cp_cfg_build(struct cp_cfg *cfg, const struct cp_cfg_part *parts, size_t nparts,
		 const struct cp_cfg_oracle *oracle);

/* Index of the block containing addr, or CP_CFG_NONE. O(log n). */
uint32_t cp_cfg_find_block(const struct cp_cfg *cfg, uint64_t addr);

/* True for names of C/C++ runtime functions that never return (exit, _exit, abort,
 * __stack_chk_fail, __assert_fail, longjmp, __cxa_throw, ...). Accepts versioned
 * (`exit@GLIBC_2.2.5`) and PLT (`exit@plt`) spellings. */
bool cp_cfg_noreturn_name(const char *name);

const char *cp_cfg_edge_kind_name(unsigned kind);

#endif
