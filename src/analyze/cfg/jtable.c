/* Jump-table recognition: a backward slice over the last instructions of one linear
 * decoding run, matching what gcc and clang emit for a switch on x86-64:
 *
 *   PIC, 4-byte entries relative to the table:
 *     cmp $N, %eX ; ja default ; [mov %eX, %eY]
 *     lea T(%rip), %rB ; movslq (%rB,%rY,4), %rR ; add %rB, %rR ; jmp *%rR
 *   non-PIC, 8-byte absolute entries:
 *     cmp $N, %eX ; ja default ; jmp *T(,%rX,8)     (or mov T(,%rX,8),%rR ; jmp *%rR)
 *
 * The table size comes from the guard: ja gives N+1 entries, jae gives N. Without a
 * guard the jump stays unresolved (reading an unbounded table would invent edges). */
#include "analyze/cfg/cfg-internal.h"

/* back = 0: the newest instruction (the jmp). NULL past the oldest. */
static const struct cp_x86_insn *hist_at(const struct cp_cfg_history *h, unsigned back)
{
	if (back >= h->n)
		return NULL;
	unsigned i = (h->head + CP_CFG_HISTORY - 1 - back) % CP_CFG_HISTORY;
	return &h->insn[i];
}

static bool writes_reg(const struct cp_x86_insn *in, uint8_t reg)
{
	if (in->op[0].kind != CP_X86_OPND_REG || in->op[0].reg != reg)
		return false;
	return in->opkind != CP_X86_OP_CMP && in->opkind != CP_X86_OP_PUSH;
}

/* The newest instruction older than `from` that writes reg; *at gets its position. */
static const struct cp_x86_insn *find_def(const struct cp_cfg_history *h, unsigned from,
					  uint8_t reg, unsigned *at)
{
	for (unsigned b = from + 1; b < h->n; b++) {
		const struct cp_x86_insn *in = hist_at(h, b);
		if (in->flow == CP_X86_FLOW_CALL || in->flow == CP_X86_FLOW_CALL_INDIRECT)
			return NULL;
		if (writes_reg(in, reg)) {
			*at = b;
			return in;
		}
	}
	return NULL;
}

static bool is_reg_copy(const struct cp_x86_insn *in)
{
	return (in->opkind == CP_X86_OP_MOV || in->opkind == CP_X86_OP_MOVZX ||
		in->opkind == CP_X86_OP_MOVSXD) &&
	       in->op[1].kind == CP_X86_OPND_REG && in->op[1].reg < CP_X86_RIP;
}

/* Walks back from the table load at position `from` for `cmp $N, idx` (following register
 * copies into idx) with an out-of-range ja/jae after it. Returns the entry count or 0. */
static uint32_t find_bound(const struct cp_cfg_history *h, unsigned from, uint8_t idx)
{
	uint8_t cond = CP_X86_CC_NONE;
	for (unsigned b = from + 1; b < h->n; b++) {
		const struct cp_x86_insn *in = hist_at(h, b);
		if (in->flow == CP_X86_FLOW_CALL || in->flow == CP_X86_FLOW_CALL_INDIRECT)
			return 0;
		if (in->flow == CP_X86_FLOW_JCC && cond == CP_X86_CC_NONE &&
		    (in->cond == CP_X86_CC_A || in->cond == CP_X86_CC_AE))
			cond = in->cond;
		if (in->opkind == CP_X86_OP_CMP && in->op[0].kind == CP_X86_OPND_REG &&
		    in->op[0].reg == idx && in->op[1].kind == CP_X86_OPND_IMM) {
			if (cond == CP_X86_CC_NONE || in->op[1].imm < 0 ||
			    in->op[1].imm >= CP_CFG_MAX_JTABLE)
				return 0;
			return (uint32_t)in->op[1].imm + (cond == CP_X86_CC_A ? 1 : 0);
		}
		if (writes_reg(in, idx)) {
			if (!is_reg_copy(in))
				return 0;
			idx = in->op[1].reg;
		}
	}
	return 0;
}

static bool abs8_mem(const struct cp_x86_insn *in)
{
	return in->has_mem && in->mem.base == CP_X86_REG_NONE && in->mem.scale == 8 &&
	       in->mem.index < CP_X86_RIP && in->mem.disp > 0;
}

static bool match_abs8(const struct cp_cfg_history *h, unsigned at,
		       const struct cp_x86_insn *load, struct cp_cfg_jt_pattern *p)
{
	p->table = (uint64_t)load->mem.disp;
	p->entry_size = 8;
	p->entries = find_bound(h, at, load->mem.index);
	return p->entries > 0;
}

/* R = movslq (B,X,4) and L = lea T(%rip), B. */
static bool match_rel4(const struct cp_cfg_history *h, const struct cp_x86_insn *ld,
		       unsigned ld_at, const struct cp_x86_insn *lea, struct cp_cfg_jt_pattern *p)
{
	if (ld->opkind != CP_X86_OP_MOVSXD || !ld->has_mem || ld->mem.scale != 4 ||
	    ld->mem.index >= CP_X86_RIP || ld->mem.disp != 0)
		return false;
	if (lea->opkind != CP_X86_OP_LEA || !lea->rip_relative ||
	    lea->op[0].reg != ld->mem.base)
		return false;
	p->table = lea->mem_addr;
	p->entry_size = 4;
	p->entries = find_bound(h, ld_at, ld->mem.index);
	return p->entries > 0;
}

/* jmp *%R with R = R + S (add): one operand from the movslq, the other from the lea. */
static bool match_add(const struct cp_cfg_history *h, unsigned add_at,
		      const struct cp_x86_insn *add, struct cp_cfg_jt_pattern *p)
{
	if (add->op[1].kind != CP_X86_OPND_REG)
		return false;
	unsigned a_at = 0, b_at = 0;
	const struct cp_x86_insn *a = find_def(h, add_at, add->op[0].reg, &a_at);
	const struct cp_x86_insn *b = find_def(h, add_at, add->op[1].reg, &b_at);
	if (!a || !b)
		return false;
	return match_rel4(h, a, a_at, b, p) || match_rel4(h, b, b_at, a, p);
}

bool cp_cfg_jt_match(const struct cp_cfg_history *hist, struct cp_cfg_jt_pattern *p)
{
	const struct cp_x86_insn *jmp = hist_at(hist, 0);
	if (!jmp || jmp->flow != CP_X86_FLOW_JMP_INDIRECT)
		return false;
	if (abs8_mem(jmp))
		return match_abs8(hist, 0, jmp, p);
	if (jmp->op[0].kind != CP_X86_OPND_REG || jmp->op[0].reg >= CP_X86_RIP)
		return false;
	unsigned at = 0;
	const struct cp_x86_insn *def = find_def(hist, 0, jmp->op[0].reg, &at);
	if (!def)
		return false;
	if (def->opkind == CP_X86_OP_ADD)
		return match_add(hist, at, def, p);
	if (def->opkind == CP_X86_OP_MOV && abs8_mem(def))
		return match_abs8(hist, at, def, p);
	return false;
}
