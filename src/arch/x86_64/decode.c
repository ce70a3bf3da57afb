/* x86-64 decoding over Zydis: see decode.h. */
#include "arch/x86_64/decode.h"

#include <Zydis/Zydis.h>
#include <string.h>

static void decoder_init(ZydisDecoder *dec)
{
	ZydisDecoderInit(dec, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
}

static uint8_t canon_reg(ZydisRegister reg)
{
	if (reg == ZYDIS_REGISTER_NONE)
		return CP_X86_REG_NONE;
	if (reg == ZYDIS_REGISTER_RIP || reg == ZYDIS_REGISTER_EIP)
		return CP_X86_RIP;
	ZydisRegister big = ZydisRegisterGetLargestEnclosing(ZYDIS_MACHINE_MODE_LONG_64, reg);
	if (big >= ZYDIS_REGISTER_RAX && big <= ZYDIS_REGISTER_R15)
		return (uint8_t)(big - ZYDIS_REGISTER_RAX);
	return CP_X86_REG_OTHER;
}

static uint8_t jcc_cond(ZydisMnemonic m)
{
	switch (m) {
	case ZYDIS_MNEMONIC_JO:
		return CP_X86_CC_O;
	case ZYDIS_MNEMONIC_JNO:
		return CP_X86_CC_NO;
	case ZYDIS_MNEMONIC_JB:
		return CP_X86_CC_B;
	case ZYDIS_MNEMONIC_JNB:
		return CP_X86_CC_AE;
	case ZYDIS_MNEMONIC_JZ:
		return CP_X86_CC_E;
	case ZYDIS_MNEMONIC_JNZ:
		return CP_X86_CC_NE;
	case ZYDIS_MNEMONIC_JBE:
		return CP_X86_CC_BE;
	case ZYDIS_MNEMONIC_JNBE:
		return CP_X86_CC_A;
	case ZYDIS_MNEMONIC_JS:
		return CP_X86_CC_S;
	case ZYDIS_MNEMONIC_JNS:
		return CP_X86_CC_NS;
	case ZYDIS_MNEMONIC_JP:
		return CP_X86_CC_P;
	case ZYDIS_MNEMONIC_JNP:
		return CP_X86_CC_NP;
	case ZYDIS_MNEMONIC_JL:
		return CP_X86_CC_L;
	case ZYDIS_MNEMONIC_JNL:
		return CP_X86_CC_GE;
	case ZYDIS_MNEMONIC_JLE:
		return CP_X86_CC_LE;
	case ZYDIS_MNEMONIC_JNLE:
		return CP_X86_CC_G;
	case ZYDIS_MNEMONIC_JCXZ:
	case ZYDIS_MNEMONIC_JECXZ:
	case ZYDIS_MNEMONIC_JRCXZ:
		return CP_X86_CC_RCXZ;
	case ZYDIS_MNEMONIC_LOOP:
	case ZYDIS_MNEMONIC_LOOPE:
	case ZYDIS_MNEMONIC_LOOPNE:
		return CP_X86_CC_LOOP;
	default:
		return CP_X86_CC_NONE;
	}
}

static uint8_t op_class(ZydisMnemonic m)
{
	switch (m) {
	case ZYDIS_MNEMONIC_MOV:
		return CP_X86_OP_MOV;
	case ZYDIS_MNEMONIC_MOVSXD:
		return CP_X86_OP_MOVSXD;
	case ZYDIS_MNEMONIC_MOVZX:
		return CP_X86_OP_MOVZX;
	case ZYDIS_MNEMONIC_LEA:
		return CP_X86_OP_LEA;
	case ZYDIS_MNEMONIC_ADD:
		return CP_X86_OP_ADD;
	case ZYDIS_MNEMONIC_SUB:
		return CP_X86_OP_SUB;
	case ZYDIS_MNEMONIC_CMP:
		return CP_X86_OP_CMP;
	case ZYDIS_MNEMONIC_AND:
		return CP_X86_OP_AND;
	case ZYDIS_MNEMONIC_XOR:
		return CP_X86_OP_XOR;
	case ZYDIS_MNEMONIC_NOP:
		return CP_X86_OP_NOP;
	case ZYDIS_MNEMONIC_PUSH:
		return CP_X86_OP_PUSH;
	case ZYDIS_MNEMONIC_POP:
		return CP_X86_OP_POP;
	default:
		return CP_X86_OP_OTHER;
	}
}

/* Control-flow class from the mnemonic; direct vs indirect from the first operand. */
static uint8_t flow_class(ZydisMnemonic m, bool relative)
{
	switch (m) {
	case ZYDIS_MNEMONIC_CALL:
		return relative ? CP_X86_FLOW_CALL : CP_X86_FLOW_CALL_INDIRECT;
	case ZYDIS_MNEMONIC_JMP:
		return relative ? CP_X86_FLOW_JMP : CP_X86_FLOW_JMP_INDIRECT;
	case ZYDIS_MNEMONIC_RET:
	case ZYDIS_MNEMONIC_IRET:
	case ZYDIS_MNEMONIC_IRETD:
	case ZYDIS_MNEMONIC_IRETQ:
		return CP_X86_FLOW_RET;
	case ZYDIS_MNEMONIC_SYSCALL:
	case ZYDIS_MNEMONIC_SYSENTER:
	case ZYDIS_MNEMONIC_INT:
	case ZYDIS_MNEMONIC_INTO:
		return CP_X86_FLOW_SYSCALL;
	case ZYDIS_MNEMONIC_HLT:
	case ZYDIS_MNEMONIC_UD0:
	case ZYDIS_MNEMONIC_UD1:
	case ZYDIS_MNEMONIC_UD2:
	case ZYDIS_MNEMONIC_INT3:
	case ZYDIS_MNEMONIC_INT1:
		return CP_X86_FLOW_TRAP;
	default:
		return jcc_cond(m) != CP_X86_CC_NONE && relative ? CP_X86_FLOW_JCC
								 : CP_X86_FLOW_NONE;
	}
}

static void set_mem(struct cp_x86_insn *insn, const ZydisDecodedInstruction *zi,
		    const ZydisDecodedOperand *op)
{
	insn->has_mem = true;
	insn->mem.base = canon_reg(op->mem.base);
	insn->mem.index = canon_reg(op->mem.index);
	insn->mem.scale = op->mem.index == ZYDIS_REGISTER_NONE ? 0 : op->mem.scale;
	insn->mem.size = op->mem.type == ZYDIS_MEMOP_TYPE_AGEN ? 0 : (uint8_t)(op->size / 8);
	insn->mem.disp = op->mem.disp.has_displacement ? op->mem.disp.value : 0;
	if (insn->mem.base == CP_X86_RIP) {
		insn->rip_relative = true;
		insn->mem_addr = insn->addr + zi->length + (uint64_t)insn->mem.disp;
	}
}

static void set_operands(struct cp_x86_insn *insn, const ZydisDecodedInstruction *zi,
			 const ZydisDecodedOperand *ops)
{
	for (unsigned i = 0; i < zi->operand_count_visible; i++) {
		const ZydisDecodedOperand *op = &ops[i];
		struct cp_x86_opnd *o = i < 2 ? &insn->op[i] : NULL;
		if (o)
			o->size = (uint8_t)(op->size / 8);
		switch (op->type) {
		case ZYDIS_OPERAND_TYPE_REGISTER:
			if (o) {
				o->kind = CP_X86_OPND_REG;
				o->reg = canon_reg(op->reg.value);
			}
			break;
		case ZYDIS_OPERAND_TYPE_MEMORY:
			if (o)
				o->kind = CP_X86_OPND_MEM;
			if (!insn->has_mem)
				set_mem(insn, zi, op);
			break;
		case ZYDIS_OPERAND_TYPE_IMMEDIATE:
			if (o) {
				o->kind = CP_X86_OPND_IMM;
				o->imm =
				    op->imm.is_signed ? op->imm.value.s : (int64_t)op->imm.value.u;
			}
			break;
		default:
			break;
		}
	}
}

/* RIP-relative memory operand from the raw ModRM alone (mod 00, rm 101, no SIB). */
static void raw_rip_relative(struct cp_x86_insn *insn, const ZydisDecodedInstruction *zi)
{
	if (!(zi->attributes & ZYDIS_ATTRIB_HAS_MODRM) || (zi->attributes & ZYDIS_ATTRIB_HAS_SIB))
		return;
	if (zi->raw.modrm.mod != 0 || zi->raw.modrm.rm != 5 || zi->raw.disp.size != 32)
		return;
	insn->rip_relative = true;
	insn->mem_addr = insn->addr + zi->length + (uint64_t)zi->raw.disp.value;
}

static unsigned decode(const uint8_t *bytes, size_t len, uint64_t addr, struct cp_x86_insn *insn,
		       bool operands)
{
	ZydisDecoder dec;
	ZydisDecoderContext ctx;
	ZydisDecodedInstruction zi;
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT_VISIBLE];

	memset(insn, 0, sizeof(*insn));
	insn->addr = addr;
	insn->op[0].reg = insn->op[1].reg = CP_X86_REG_NONE;
	decoder_init(&dec);
	if (!ZYAN_SUCCESS(ZydisDecoderDecodeInstruction(&dec, &ctx, bytes, len, &zi)))
		return 0;
	if (operands) {
		if (!ZYAN_SUCCESS(ZydisDecoderDecodeOperands(&dec, &ctx, &zi, ops,
							     ZYDIS_MAX_OPERAND_COUNT_VISIBLE)))
			return 0;
		set_operands(insn, &zi, ops);
	} else {
		raw_rip_relative(insn, &zi);
	}
	insn->len = zi.length;
	insn->mnemonic = (uint16_t)zi.mnemonic;
	insn->nops = zi.operand_count_visible;
	insn->opkind = op_class(zi.mnemonic);

	bool relative = (zi.attributes & ZYDIS_ATTRIB_IS_RELATIVE) && !insn->rip_relative &&
			zi.raw.imm[0].is_relative;
	insn->flow = flow_class(zi.mnemonic, relative);
	if (insn->flow == CP_X86_FLOW_JCC)
		insn->cond = jcc_cond(zi.mnemonic);
	if (relative) {
		insn->target = addr + zi.length + (uint64_t)zi.raw.imm[0].value.s;
		insn->rel_offset = zi.raw.imm[0].offset;
		insn->rel_size = zi.raw.imm[0].size / 8;
	}
	if (zi.raw.disp.size) {
		insn->disp_offset = zi.raw.disp.offset;
		insn->disp_size = zi.raw.disp.size / 8;
	}
	return zi.length;
}

unsigned cp_x86_decode(const uint8_t *bytes, size_t len, uint64_t addr, struct cp_x86_insn *insn)
{
	return decode(bytes, len, addr, insn, true);
}

unsigned cp_x86_decode_flow(const uint8_t *bytes, size_t len, uint64_t addr,
			    struct cp_x86_insn *insn)
{
	return decode(bytes, len, addr, insn, false);
}

const char *cp_x86_mnemonic_name(unsigned mnemonic)
{
	const char *s = NULL;
	if (mnemonic <= ZYDIS_MNEMONIC_MAX_VALUE)
		s = ZydisMnemonicGetString((ZydisMnemonic)mnemonic);
	return s ? s : "?";
}

int cp_x86_format(const uint8_t *bytes, size_t len, uint64_t addr, char *buf, size_t size)
{
	ZydisDecoder dec;
	ZydisFormatter fmt;
	ZydisDecodedInstruction zi;
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];

	if (size)
		buf[0] = '\0';
	decoder_init(&dec);
	if (!ZYAN_SUCCESS(ZydisDecoderDecodeFull(&dec, bytes, len, &zi, ops)))
		return -1;
	if (!ZYAN_SUCCESS(ZydisFormatterInit(&fmt, ZYDIS_FORMATTER_STYLE_ATT)))
		return -1;
	/* "call 0x1015", as objdump prints it, not "call 0x0000000000001015" */
	ZydisFormatterSetProperty(&fmt, ZYDIS_FORMATTER_PROP_ADDR_PADDING_ABSOLUTE,
				  ZYDIS_PADDING_DISABLED);
	if (!ZYAN_SUCCESS(ZydisFormatterFormatInstruction(&fmt, &zi, ops, zi.operand_count_visible,
							  buf, size, addr, NULL)))
		return -1;
	return 0;
}

bool cp_x86_is_call_before(const uint8_t *before, size_t avail, uint64_t retaddr, uint64_t *target)
{
	if (target)
		*target = 0;
	if (avail > CP_X86_MAX_INSN)
		avail = CP_X86_MAX_INSN;
	/* Shortest first: "call *%rax" is 2 bytes; direct calls are 5. */
	for (size_t k = 2; k <= avail; k++) {
		struct cp_x86_insn insn;
		if (cp_x86_decode(before - k, k, retaddr - k, &insn) != k)
			continue;
		if (insn.flow == CP_X86_FLOW_CALL) {
			if (target)
				*target = insn.target;
			return true;
		}
		if (insn.flow == CP_X86_FLOW_CALL_INDIRECT)
			return true;
	}
	return false;
}
