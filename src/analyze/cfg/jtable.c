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

static bool same_mem(const struct cp_x86_mem *a, const struct cp_x86_mem *b)
{
	return a->base == b->base && a->index == b->index && a->scale == b->scale &&
	       a->disp == b->disp;
}

static bool is_mem_load(const struct cp_x86_insn *in)
{
	return (in->opkind == CP_X86_OP_MOV || in->opkind == CP_X86_OP_MOVZX ||
		in->opkind == CP_X86_OP_MOVSXD) &&
	       in->op[1].kind == CP_X86_OPND_MEM && in->mem.base != CP_X86_RIP;
}

/* cmp $N against the tracked index (a register, or the memory word it was loaded from:
 * gcc's `cmpq $6,(%rcx,%rdx,8); ja; mov (%rcx,%rdx,8),%rax`). */
static bool is_guard_cmp(const struct cp_x86_insn *in, uint8_t idx, const struct cp_x86_mem *m)
{
	if (in->opkind != CP_X86_OP_CMP || in->op[1].kind != CP_X86_OPND_IMM)
		return false;
	if (!m)
		return in->op[0].kind == CP_X86_OPND_REG && in->op[0].reg == idx;
	return in->op[0].kind == CP_X86_OPND_MEM && same_mem(&in->mem, m);
}

/* Walks back from the table load at position `from` for `cmp $N, idx` (following register
 * copies into idx, and a load of idx from memory) with an out-of-range ja/jae after it.
 * Returns the entry count or 0. */
static uint32_t find_bound(const struct cp_cfg_history *h, unsigned from, uint8_t idx)
{
	uint8_t cond = CP_X86_CC_NONE;
	const struct cp_x86_mem *m = NULL; /* the index was loaded from there */
	for (unsigned b = from + 1; b < h->n; b++) {
		const struct cp_x86_insn *in = hist_at(h, b);
		if (in->flow == CP_X86_FLOW_CALL || in->flow == CP_X86_FLOW_CALL_INDIRECT)
			return 0;
		if (in->flow == CP_X86_FLOW_JCC && cond == CP_X86_CC_NONE &&
		    (in->cond == CP_X86_CC_A || in->cond == CP_X86_CC_AE))
			cond = in->cond;
		if (is_guard_cmp(in, idx, m)) {
			if (cond == CP_X86_CC_NONE || in->op[1].imm < 0 ||
			    in->op[1].imm >= CP_CFG_MAX_JTABLE)
				return 0;
			return (uint32_t)in->op[1].imm + (cond == CP_X86_CC_A ? 1 : 0);
		}
		if (m) {
			if (writes_reg(in, m->base) || writes_reg(in, m->index))
				return 0; /* the address changed: not the same word */
			continue;
		}
		if (!writes_reg(in, idx))
			continue;
		if (is_mem_load(in))
			m = &in->mem;
		else if (is_reg_copy(in))
			idx = in->op[1].reg;
		else
			return 0;
	}
	return 0;
}

static bool abs8_mem(const struct cp_x86_insn *in)
{
	return in->has_mem && in->mem.base == CP_X86_REG_NONE && in->mem.scale == 8 &&
	       in->mem.index < CP_X86_RIP && in->mem.disp > 0;
}

static bool match_abs8(const struct cp_cfg_history *h, unsigned at, const struct cp_x86_insn *load,
		       struct cp_cfg_jt_pattern *p)
{
	p->table = (uint64_t)load->mem.disp;
	p->entry_size = 8;
	p->entries = find_bound(h, at, load->mem.index);
	return p->entries > 0;
}

/* R = movslq (B,X,4) and L = lea T(%rip), B. lea NULL: B is set before the run (a
 * table address hoisted out of a loop); the caller looks for the lea of B itself. */
static bool match_rel4(const struct cp_cfg_history *h, const struct cp_x86_insn *ld, unsigned ld_at,
		       const struct cp_x86_insn *lea, uint8_t other, struct cp_cfg_jt_pattern *p)
{
	if (ld->opkind != CP_X86_OP_MOVSXD || !ld->has_mem || ld->mem.scale != 4 ||
	    ld->mem.index >= CP_X86_RIP || ld->mem.base >= CP_X86_RIP || ld->mem.disp != 0)
		return false;
	if (!lea) {
		if (ld->mem.base != other)
			return false;
		p->need_base = true;
		p->base_reg = ld->mem.base;
		p->table = 0;
	} else if (lea->opkind != CP_X86_OP_LEA || !lea->rip_relative ||
		   lea->op[0].reg != ld->mem.base) {
		return false;
	} else {
		p->table = lea->mem_addr;
	}
	p->entry_size = 4;
	p->entries = find_bound(h, ld_at, ld->mem.index);
	return p->entries > 0;
}

/* jmp *%R with R = A + B (add R,S or lea (A,B),R): one operand comes from the movslq,
 * the other from the lea of the table. */
static bool match_sum(const struct cp_cfg_history *h, unsigned at, uint8_t ra, uint8_t rb,
		      struct cp_cfg_jt_pattern *p)
{
	unsigned a_at = 0, b_at = 0;
	const struct cp_x86_insn *a = find_def(h, at, ra, &a_at);
	const struct cp_x86_insn *b = find_def(h, at, rb, &b_at);
	if (a && match_rel4(h, a, a_at, b, rb, p))
		return true;
	return b && match_rel4(h, b, b_at, a, ra, p);
}

bool cp_cfg_jt_match(const struct cp_cfg_history *hist, struct cp_cfg_jt_pattern *p)
{
	const struct cp_x86_insn *jmp = hist_at(hist, 0);
	if (!jmp || jmp->flow != CP_X86_FLOW_JMP_INDIRECT)
		return false;
	p->need_base = false;
	if (abs8_mem(jmp))
		return match_abs8(hist, 0, jmp, p);
	if (jmp->op[0].kind != CP_X86_OPND_REG || jmp->op[0].reg >= CP_X86_RIP)
		return false;
	unsigned at = 0;
	const struct cp_x86_insn *def = find_def(hist, 0, jmp->op[0].reg, &at);
	if (!def)
		return false;
	if (def->opkind == CP_X86_OP_ADD && def->op[1].kind == CP_X86_OPND_REG)
		return match_sum(hist, at, def->op[0].reg, def->op[1].reg, p);
	if (def->opkind == CP_X86_OP_LEA && def->mem.scale == 1 && def->mem.disp == 0 &&
	    def->mem.base < CP_X86_RIP && def->mem.index < CP_X86_RIP)
		return match_sum(hist, at, def->mem.base, def->mem.index, p);
	if (def->opkind == CP_X86_OP_MOV && abs8_mem(def))
		return match_abs8(hist, at, def, p);
	return false;
}

/* A jump through a code pointer loaded from memory without an index (a member of a
 * struct, a vtable slot) or copied from another register (a callback argument):
 * jmp *8(%rax); mov 0x48(%rbx),%rax ; jmp *%rax; mov %rbp,%rax ; jmp *%rax. */
bool cp_cfg_jt_pointer_jump(const struct cp_cfg_history *hist)
{
	const struct cp_x86_insn *jmp = hist_at(hist, 0);
	if (!jmp || jmp->flow != CP_X86_FLOW_JMP_INDIRECT)
		return false;
	if (jmp->has_mem)
		return jmp->mem.scale == 0;
	if (jmp->op[0].kind != CP_X86_OPND_REG || jmp->op[0].reg >= CP_X86_RIP)
		return false;
	unsigned at = 0;
	const struct cp_x86_insn *def = find_def(hist, 0, jmp->op[0].reg, &at);
	if (!def || def->opkind != CP_X86_OP_MOV)
		return false;
	if (def->op[1].kind == CP_X86_OPND_REG) /* a pointer passed in a register */
		return def->op[1].reg < CP_X86_RIP;
	return def->op[1].kind == CP_X86_OPND_MEM && def->mem.scale == 0;
}
