/* x86-64 instruction decoding for the analyzer and the patch engine: a thin,
 * allocation-free layer over Zydis (the only place that calls it). One call decodes one
 * instruction into the few facts callers need: its length, how it transfers control, its
 * direct target, where a RIP-relative displacement or branch immediate sits inside the
 * instruction (the patch engine rewrites them when it moves code), and a summary of its
 * first two explicit operands (enough to recognise jump-table idioms).
 *
 * Everything here is a pure function of its arguments: no global state, no malloc, no
 * locks, no stdio, so it is usable from any thread. Zydis's decoder only reads constant
 * tables, which makes cp_x86_decode*, cp_x86_mnemonic_name and cp_x86_is_call_before
 * usable from a signal handler too (the unwinder's stack scan); the caller must make sure
 * the bytes it passes are readable. */
#ifndef CP_ARCH_X86_64_DECODE_H
#define CP_ARCH_X86_64_DECODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CP_X86_MAX_INSN 15

/* How an instruction transfers control. */
enum cp_x86_flow {
	CP_X86_FLOW_NONE = 0,	   /* falls through to the next instruction */
	CP_X86_FLOW_CALL,	   /* call rel32: target set */
	CP_X86_FLOW_CALL_INDIRECT, /* call *reg / call *mem */
	CP_X86_FLOW_JMP,	   /* jmp rel8/rel32: target set */
	CP_X86_FLOW_JMP_INDIRECT,  /* jmp *reg / jmp *mem */
	CP_X86_FLOW_JCC,	   /* jcc, jrcxz, loop*: target set, cond set, falls through */
	CP_X86_FLOW_RET,	   /* ret, ret imm16 */
	CP_X86_FLOW_SYSCALL,	   /* syscall, sysenter, int imm8: falls through */
	CP_X86_FLOW_TRAP,	   /* hlt, ud0/ud1/ud2, int3, int1: does not fall through */
};

/* Canonical registers: the 64-bit general purpose register enclosing the operand
 * (eax, ax, al -> RAX), RIP, or OTHER (segment, vector, ...). NONE = no register. */
enum cp_x86_reg {
	CP_X86_RAX = 0,
	CP_X86_RCX,
	CP_X86_RDX,
	CP_X86_RBX,
	CP_X86_RSP,
	CP_X86_RBP,
	CP_X86_RSI,
	CP_X86_RDI,
	CP_X86_R8,
	CP_X86_R9,
	CP_X86_R10,
	CP_X86_R11,
	CP_X86_R12,
	CP_X86_R13,
	CP_X86_R14,
	CP_X86_R15,
	CP_X86_RIP = 16,
	CP_X86_REG_OTHER = 17,
	CP_X86_REG_NONE = 0xff,
};

/* The operations jump-table recognition looks at; everything else is OTHER. */
enum cp_x86_op {
	CP_X86_OP_OTHER = 0,
	CP_X86_OP_MOV,	  /* mov (register, memory, immediate) */
	CP_X86_OP_MOVSXD, /* movslq / movsxd */
	CP_X86_OP_MOVZX,
	CP_X86_OP_LEA,
	CP_X86_OP_ADD,
	CP_X86_OP_SUB,
	CP_X86_OP_CMP,
	CP_X86_OP_AND,
	CP_X86_OP_XOR,
	CP_X86_OP_NOP,
	CP_X86_OP_PUSH,
	CP_X86_OP_POP,
};

/* Condition of a CP_X86_FLOW_JCC (the taken condition). */
enum cp_x86_cond {
	CP_X86_CC_NONE = 0,
	CP_X86_CC_O,
	CP_X86_CC_NO,
	CP_X86_CC_B,
	CP_X86_CC_AE,
	CP_X86_CC_E,
	CP_X86_CC_NE,
	CP_X86_CC_BE,
	CP_X86_CC_A,
	CP_X86_CC_S,
	CP_X86_CC_NS,
	CP_X86_CC_P,
	CP_X86_CC_NP,
	CP_X86_CC_L,
	CP_X86_CC_GE,
	CP_X86_CC_LE,
	CP_X86_CC_G,
	CP_X86_CC_RCXZ, /* jrcxz / jecxz */
	CP_X86_CC_LOOP, /* loop, loope, loopne */
};

enum cp_x86_opnd_kind {
	CP_X86_OPND_NONE = 0,
	CP_X86_OPND_REG,
	CP_X86_OPND_MEM,
	CP_X86_OPND_IMM,
};

/* A memory operand: [base + index*scale + disp]. For base == CP_X86_RIP, disp is the raw
 * displacement and cp_x86_insn.mem_addr holds the absolute address. */
struct cp_x86_mem {
	uint8_t base;  /* enum cp_x86_reg */
	uint8_t index; /* enum cp_x86_reg */
	uint8_t scale; /* 0 (no index), 1, 2, 4, 8 */
	uint8_t size;  /* access size in bytes (0 for lea) */
	int64_t disp;
};

struct cp_x86_opnd {
	uint8_t kind; /* enum cp_x86_opnd_kind */
	uint8_t reg;  /* CP_X86_OPND_REG: enum cp_x86_reg */
	uint8_t size; /* operand size in bytes */
	int64_t imm;  /* CP_X86_OPND_IMM: sign-extended value */
};

struct cp_x86_insn {
	uint64_t addr;		  /* address the instruction was decoded at */
	uint64_t target;	  /* direct branch/call target (flow CALL, JMP, JCC), else 0 */
	uint64_t mem_addr;	  /* absolute address of a RIP-relative memory operand, else 0 */
	struct cp_x86_mem mem;	  /* the (first) memory operand, when has_mem */
	struct cp_x86_opnd op[2]; /* first two explicit operands (AT&T: op[0] is the
				   * destination, i.e. Intel order) */
	uint16_t mnemonic;	  /* Zydis mnemonic id; see cp_x86_mnemonic_name() */
	uint8_t len;
	uint8_t flow;	   /* enum cp_x86_flow */
	uint8_t cond;	   /* enum cp_x86_cond */
	uint8_t opkind;	   /* enum cp_x86_op */
	uint8_t nops;	   /* explicit operands (may exceed 2; only 2 summarised) */
	bool has_mem;	   /* an explicit memory operand (mem is set) */
	bool rip_relative; /* a RIP-relative memory operand (mem_addr, disp_* set) */
	/* Position of fields inside the instruction bytes, for relocation (0 size: none). */
	uint8_t disp_offset, disp_size; /* memory displacement (RIP-relative or not) */
	uint8_t rel_offset, rel_size;	/* relative branch immediate (CALL/JMP/JCC) */
};

/* Decodes one 64-bit-mode instruction from bytes[0..len) located at addr.
 * Returns the instruction length (1..15) or 0 when the bytes are not a valid instruction
 * (or are truncated by len). Allocation-free. */
unsigned cp_x86_decode(const uint8_t *bytes, size_t len, uint64_t addr, struct cp_x86_insn *insn);

/* The same without operand decoding (about 1.6x faster): op[], mem and has_mem are not
 * set (op kinds NONE); len, nops, flow, cond, opkind, mnemonic, target, rel_*, disp_*,
 * rip_relative and mem_addr are. For scanning code where operands rarely matter. */
unsigned cp_x86_decode_flow(const uint8_t *bytes, size_t len, uint64_t addr,
			    struct cp_x86_insn *insn);

/* The mnemonic in lower case ("jmp", "movsxd"); "?" for an unknown id. */
const char *cp_x86_mnemonic_name(unsigned mnemonic);
/* The whole instruction in AT&T syntax into buf (NUL-terminated, truncated to size).
 * Returns 0, or -1 when the bytes do not decode. */
int cp_x86_format(const uint8_t *bytes, size_t len, uint64_t addr, char *buf, size_t size);

/* True when a call instruction ends exactly at retaddr, i.e. some call of length k sits
 * at retaddr - k. `before` points to the bytes just below retaddr: before[-avail ..
 * -1] are readable (avail may be 0..; at most 15 are used). Sets *target for a direct
 * call (else 0) when target is non-NULL. Pure: reads only before[-avail..-1]. For the
 * unwinder's stack-scanning fallback (is this stack word a return address?). */
bool cp_x86_is_call_before(const uint8_t *before, size_t avail, uint64_t retaddr, uint64_t *target);

#endif
