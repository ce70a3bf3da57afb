/* Relocation of single x86-64 instructions and the patch engine's encodings. */
#include "arch/x86_64/relocate.h"

#include <string.h>

static void put32(uint8_t *p, int32_t v)
{
	memcpy(p, &v, 4);
}

int cp_x86_rel32_fits(uint64_t end, uint64_t target)
{
	int64_t d = (int64_t)(target - end);
	return d >= INT32_MIN && d <= INT32_MAX;
}

unsigned cp_x86_encode_jmp32(uint8_t *out, uint64_t at, uint64_t target)
{
	if (!cp_x86_rel32_fits(at + 5, target))
		return 0;
	out[0] = 0xe9;
	put32(out + 1, (int32_t)(target - (at + 5)));
	return 5;
}

unsigned cp_x86_encode_jmp_abs(uint8_t *out, uint64_t target)
{
	static const uint8_t jmp_rip[6] = {0xff, 0x25, 0, 0, 0, 0};
	memcpy(out, jmp_rip, 6);
	memcpy(out + 6, &target, 8);
	return CP_X86_JMP_ABS_LEN;
}

unsigned cp_x86_encode_movabs_r11(uint8_t *out, uint64_t imm)
{
	out[0] = 0x49;
	out[1] = 0xbb;
	memcpy(out + 2, &imm, 8);
	return CP_X86_MOVABS_R11_LEN;
}

unsigned cp_x86_encode_call_returning(uint8_t *out, uint64_t at, uint64_t ret_addr, uint64_t target)
{
	static const uint8_t head[6] = {0x48, 0x8d, 0x64, 0x24, 0xf8, 0x50};
	static const uint8_t tail[6] = {0x48, 0x89, 0x44, 0x24, 0x08, 0x58};
	memcpy(out, head, 6);
	out[6] = 0x48; /* lea disp32(%rip), %rax */
	out[7] = 0x8d;
	out[8] = 0x05;
	if (!cp_x86_rel32_fits(at + 13, ret_addr))
		return 0;
	put32(out + 9, (int32_t)(ret_addr - (at + 13)));
	memcpy(out + 13, tail, 6);
	if (!cp_x86_encode_jmp32(out + 19, at + 19, target))
		return 0;
	return CP_X86_CALL_RET_LEN;
}

/* The branch kinds that are rewritten rather than copied. */
enum branch { B_NONE, B_CALL, B_JMP, B_JCC, B_SHORT_ONLY, B_BAD };

static enum branch branch_kind(const uint8_t *bytes, const struct cp_x86_insn *insn)
{
	if (!insn->rel_size)
		return B_NONE;
	if (insn->rel_offset < 1 || insn->rel_offset + insn->rel_size != insn->len)
		return B_BAD;
	uint8_t op = bytes[insn->rel_offset - 1];
	switch (insn->flow) {
	case CP_X86_FLOW_CALL:
		return insn->rel_size == 4 && op == 0xe8 ? B_CALL : B_BAD;
	case CP_X86_FLOW_JMP:
		return (op == 0xeb && insn->rel_size == 1) || (op == 0xe9 && insn->rel_size == 4)
			   ? B_JMP
			   : B_BAD;
	case CP_X86_FLOW_JCC:
		if (insn->cond == CP_X86_CC_RCXZ || insn->cond == CP_X86_CC_LOOP)
			return insn->rel_size == 1 && op >= 0xe0 && op <= 0xe3 ? B_SHORT_ONLY
									       : B_BAD;
		if (insn->rel_size == 1 && op >= 0x70 && op <= 0x7f)
			return B_JCC;
		if (insn->rel_size == 4 && op >= 0x80 && op <= 0x8f && insn->rel_offset >= 2 &&
		    bytes[insn->rel_offset - 2] == 0x0f)
			return B_JCC;
		return B_BAD;
	default:
		return B_BAD; /* xbegin and other relative forms */
	}
}

unsigned cp_x86_reloc_size(const uint8_t *bytes, const struct cp_x86_insn *insn)
{
	if (insn->len == 0 || insn->len > CP_X86_MAX_INSN)
		return 0;
	if (insn->rip_relative && insn->disp_size != 4)
		return 0;
	switch (branch_kind(bytes, insn)) {
	case B_NONE:
		return insn->len;
	case B_CALL:
	case B_JMP:
		return 5;
	case B_JCC:
		return 6;
	case B_SHORT_ONLY:
		return insn->rel_offset + 1u + 2u + 5u;
	default:
		return 0;
	}
}

unsigned cp_x86_relocate(const uint8_t *bytes, const struct cp_x86_insn *insn, uint64_t new_addr,
			 uint64_t target, uint8_t *out)
{
	unsigned size = cp_x86_reloc_size(bytes, insn);
	if (!size)
		return 0;
	uint8_t cc;
	switch (branch_kind(bytes, insn)) {
	case B_NONE:
		memcpy(out, bytes, insn->len);
		if (insn->rip_relative) {
			uint64_t end = new_addr + insn->len;
			if (!cp_x86_rel32_fits(end, insn->mem_addr))
				return 0;
			put32(out + insn->disp_offset, (int32_t)(insn->mem_addr - end));
		}
		return size;
	case B_CALL:
	case B_JMP:
		if (!cp_x86_rel32_fits(new_addr + 5, target))
			return 0;
		out[0] = branch_kind(bytes, insn) == B_CALL ? 0xe8 : 0xe9;
		put32(out + 1, (int32_t)(target - (new_addr + 5)));
		return size;
	case B_JCC:
		if (!cp_x86_rel32_fits(new_addr + 6, target))
			return 0;
		cc = bytes[insn->rel_offset - 1] & 0x0f;
		out[0] = 0x0f;
		out[1] = (uint8_t)(0x80 | cc);
		put32(out + 2, (int32_t)(target - (new_addr + 6)));
		return size;
	case B_SHORT_ONLY: {
		/* jrcxz/loop +2 ; jmp +5 ; jmp rel32 target */
		unsigned n = insn->rel_offset;
		memcpy(out, bytes, n);
		out[n++] = 2;
		out[n++] = 0xeb;
		out[n++] = 5;
		if (!cp_x86_encode_jmp32(out + n, new_addr + n, target))
			return 0;
		return size;
	}
	default:
		return 0;
	}
}
