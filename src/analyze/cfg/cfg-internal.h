/* Private to src/analyze/cfg: the builder's reusable scratch state. */
#ifndef CP_ANALYZE_CFG_INTERNAL_H
#define CP_ANALYZE_CFG_INTERNAL_H

#include "analyze/cfg/cfg.h"
#include "arch/x86_64/decode.h"

/* Instructions remembered along one linear decoding run, for jump-table recognition. */
#define CP_CFG_HISTORY 24
/* Most entries read from one jump table. */
#define CP_CFG_MAX_JTABLE 4096

/* Per-byte marks over the flattened procedure (parts sorted by address, concatenated). */
enum {
	MARK_LEADER = 1 << 0,  /* a block starts here */
	MARK_ENDS = 1 << 1,    /* the instruction starting here ends its block */
	MARK_BAD = 1 << 2,     /* decoding failed here */
	MARK_INSIDE = 1 << 3,  /* covered by an instruction starting earlier */
	MARK_OVERLAP = 1 << 4, /* a run started inside another instruction */
	MARK_QUEUED = 1 << 5,
	MARK_PTRJUMP = 1 << 6, /* jmp * through a code pointer: an indirect tail call */
};

struct cp_cfg_flat_part {
	uint64_t lo, hi;
	const uint8_t *bytes;
	uint32_t base; /* offset of lo in the flat index */
};

struct cp_cfg_history {
	struct cp_x86_insn insn[CP_CFG_HISTORY];
	unsigned n;    /* valid entries (<= CP_CFG_HISTORY) */
	unsigned head; /* next slot to write */
};

struct cp_cfg_scratch {
	struct cp_cfg_flat_part *parts;
	size_t nparts, parts_alloc;
	uint8_t *ilen; /* instruction length at each flat offset (0: no instruction start) */
	uint8_t *mark;
	size_t size, size_alloc;
	uint32_t *work;
	size_t nwork, work_alloc;
	uint32_t hist_off[CP_CFG_HISTORY]; /* offsets of the last instructions of the run */
	unsigned hist_n, hist_head;
	uint64_t *jt_targets; /* targets of all resolved tables, in table order */
	size_t njt_targets, jt_targets_alloc;
	uint32_t *jt_first; /* per cfg->jtables[i]: first index into jt_targets */
	size_t jt_first_alloc;
	struct cp_cfg_pending *pending;
	size_t npending, pending_alloc;
	uint32_t *dsts; /* edge building: distinct destination blocks */
	size_t dsts_alloc;
	uint64_t entry;
	const struct cp_cfg_oracle *oracle;
};

/* Flat offset of addr, or UINT32_MAX when addr is outside every part. */
uint32_t cp_cfg_flat_offset(const struct cp_cfg_scratch *s, uint64_t addr);

/* A recognised jump table before its entries are read. */
struct cp_cfg_jt_pattern {
	uint64_t table;
	uint32_t entries;
	uint8_t entry_size; /* 4: int32 relative to table; 8: absolute */
	bool need_base;	    /* table unknown: it is the one `lea T(%rip), base_reg` */
	uint8_t base_reg;
};

/* A jump table whose base register is set outside the run (resolved after decoding). */
struct cp_cfg_pending {
	uint64_t jump;
	struct cp_cfg_jt_pattern p;
};

/* Recognises the jump-table idiom ending at the indirect jmp, which is the newest entry
 * of hist. Returns true and fills *p when the idiom and its bound are found. */
bool cp_cfg_jt_match(const struct cp_cfg_history *hist, struct cp_cfg_jt_pattern *p);

/* True when the indirect jmp (newest in hist) goes through a code pointer loaded from
 * memory without an index: an indirect tail call, not a branch inside the procedure. */
bool cp_cfg_jt_pointer_jump(const struct cp_cfg_history *hist);

#endif
