/* The x86-64 decoder wrapper against hand-assembled encodings (checked with
 * `objdump -D -b binary -m i386:x86-64`), and the call-before-return-address scan. */
#include "arch/x86_64/decode.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

struct enc {
	const char *what;
	uint8_t bytes[16];
	unsigned n;   /* bytes given */
	unsigned len; /* expected length (0: invalid) */
	uint8_t flow, cond, opkind;
	uint64_t target; /* expected direct target (decoded at 0x1000) */
	uint8_t rel_offset, rel_size, disp_offset, disp_size;
	bool rip;
	uint64_t mem_addr;
};

#define AT 0x1000

/* one instruction a line: */
/* clang-format off */
static const struct enc table[] = {
	{"call rel32", {0xe8, 0x10, 0x00, 0x00, 0x00}, 5, 5, CP_X86_FLOW_CALL, 0, 0,
	 AT + 5 + 0x10, 1, 4, 0, 0, false, 0},
	{"call rel32 backwards", {0xe8, 0xfb, 0xff, 0xff, 0xff}, 5, 5, CP_X86_FLOW_CALL, 0, 0, AT,
	 1, 4, 0, 0, false, 0},
	{"jmp rel8", {0xeb, 0x05}, 2, 2, CP_X86_FLOW_JMP, 0, 0, AT + 7, 1, 1, 0, 0, false, 0},
	{"jmp rel32", {0xe9, 0x00, 0x01, 0x00, 0x00}, 5, 5, CP_X86_FLOW_JMP, 0, 0, AT + 0x105, 1,
	 4, 0, 0, false, 0},
	{"je rel32", {0x0f, 0x84, 0x10, 0x00, 0x00, 0x00}, 6, 6, CP_X86_FLOW_JCC, CP_X86_CC_E, 0,
	 AT + 0x16, 2, 4, 0, 0, false, 0},
	{"jne self", {0x75, 0xfe}, 2, 2, CP_X86_FLOW_JCC, CP_X86_CC_NE, 0, AT, 1, 1, 0, 0, false,
	 0},
	{"ja rel8", {0x77, 0x02}, 2, 2, CP_X86_FLOW_JCC, CP_X86_CC_A, 0, AT + 4, 1, 1, 0, 0, false,
	 0},
	{"jrcxz", {0xe3, 0x00}, 2, 2, CP_X86_FLOW_JCC, CP_X86_CC_RCXZ, 0, AT + 2, 1, 1, 0, 0,
	 false, 0},
	{"loop", {0xe2, 0xfe}, 2, 2, CP_X86_FLOW_JCC, CP_X86_CC_LOOP, 0, AT, 1, 1, 0, 0, false, 0},
	{"ret", {0xc3}, 1, 1, CP_X86_FLOW_RET, 0, 0, 0, 0, 0, 0, 0, false, 0},
	{"ret imm16", {0xc2, 0x08, 0x00}, 3, 3, CP_X86_FLOW_RET, 0, 0, 0, 0, 0, 0, 0, false, 0},
	{"bnd ret", {0xf2, 0xc3}, 2, 2, CP_X86_FLOW_RET, 0, 0, 0, 0, 0, 0, 0, false, 0},
	{"lea rip", {0x48, 0x8d, 0x05, 0x78, 0x56, 0x34, 0x12}, 7, 7, CP_X86_FLOW_NONE, 0,
	 CP_X86_OP_LEA, 0, 0, 0, 3, 4, true, AT + 7 + 0x12345678},
	{"mov rip negative", {0x48, 0x8b, 0x0d, 0xf0, 0xff, 0xff, 0xff}, 7, 7, CP_X86_FLOW_NONE, 0,
	 CP_X86_OP_MOV, 0, 0, 0, 3, 4, true, AT + 7 - 0x10},
	{"cmpl imm, rip", {0x83, 0x3d, 0x10, 0x00, 0x00, 0x00, 0x05}, 7, 7, CP_X86_FLOW_NONE, 0,
	 CP_X86_OP_CMP, 0, 0, 0, 2, 4, true, AT + 7 + 0x10},
	{"jmp *rip", {0xff, 0x25, 0x00, 0x20, 0x00, 0x00}, 6, 6, CP_X86_FLOW_JMP_INDIRECT, 0, 0, 0,
	 0, 0, 2, 4, true, AT + 6 + 0x2000},
	{"call *rip", {0xff, 0x15, 0x08, 0x00, 0x00, 0x00}, 6, 6, CP_X86_FLOW_CALL_INDIRECT, 0, 0,
	 0, 0, 0, 2, 4, true, AT + 6 + 8},
	{"jmp *rax", {0xff, 0xe0}, 2, 2, CP_X86_FLOW_JMP_INDIRECT, 0, 0, 0, 0, 0, 0, 0, false, 0},
	{"notrack jmp *rax", {0x3e, 0xff, 0xe0}, 3, 3, CP_X86_FLOW_JMP_INDIRECT, 0, 0, 0, 0, 0, 0,
	 0, false, 0},
	{"call *rax", {0xff, 0xd0}, 2, 2, CP_X86_FLOW_CALL_INDIRECT, 0, 0, 0, 0, 0, 0, 0, false, 0},
	{"mov 8(rsp)", {0x8b, 0x44, 0x24, 0x08}, 4, 4, CP_X86_FLOW_NONE, 0, CP_X86_OP_MOV, 0, 0, 0,
	 3, 1, false, 0},
	{"syscall", {0x0f, 0x05}, 2, 2, CP_X86_FLOW_SYSCALL, 0, 0, 0, 0, 0, 0, 0, false, 0},
	{"ud2", {0x0f, 0x0b}, 2, 2, CP_X86_FLOW_TRAP, 0, 0, 0, 0, 0, 0, 0, false, 0},
	{"int3", {0xcc}, 1, 1, CP_X86_FLOW_TRAP, 0, 0, 0, 0, 0, 0, 0, false, 0},
	{"hlt", {0xf4}, 1, 1, CP_X86_FLOW_TRAP, 0, 0, 0, 0, 0, 0, 0, false, 0},
	{"endbr64", {0xf3, 0x0f, 0x1e, 0xfa}, 4, 4, CP_X86_FLOW_NONE, 0, 0, 0, 0, 0, 0, 0, false,
	 0},
	{"nopw", {0x66, 0x0f, 0x1f, 0x44, 0x00, 0x00}, 6, 6, CP_X86_FLOW_NONE, 0, CP_X86_OP_NOP, 0,
	 0, 0, 5, 1, false, 0},
	{"push es (invalid)", {0x06}, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, false, 0},
	{"truncated call", {0xe8, 0x10, 0x00}, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, false, 0},
	{"16 prefixes (too long)",
	 {0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66,
	  0x90},
	 16, 0, 0, 0, 0, 0, 0, 0, 0, 0, false, 0},
};
/* clang-format on */

static void test_encodings(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		const struct enc *e = &table[i];
		struct cp_x86_insn in;
		unsigned len = cp_x86_decode(e->bytes, e->n, AT, &in);
		if (len != e->len)
			fail_msg("%s: length %u, expected %u", e->what, len, e->len);
		if (!len)
			continue;
		if (in.flow != e->flow || in.cond != e->cond)
			fail_msg("%s: flow %u cond %u, expected %u %u", e->what, in.flow, in.cond,
				 e->flow, e->cond);
		if (e->opkind && in.opkind != e->opkind)
			fail_msg("%s: op %u, expected %u", e->what, in.opkind, e->opkind);
		if (in.target != e->target)
			fail_msg("%s: target 0x%llx", e->what, (unsigned long long)in.target);
		if (in.rel_offset != e->rel_offset || in.rel_size != e->rel_size)
			fail_msg("%s: rel %u/%u", e->what, in.rel_offset, in.rel_size);
		if (in.disp_offset != e->disp_offset || in.disp_size != e->disp_size)
			fail_msg("%s: disp %u/%u", e->what, in.disp_offset, in.disp_size);
		if (in.rip_relative != e->rip || in.mem_addr != e->mem_addr)
			fail_msg("%s: rip %d mem_addr 0x%llx", e->what, in.rip_relative,
				 (unsigned long long)in.mem_addr);
		assert_int_equal(in.len, len);
		assert_int_equal(in.addr, AT);
		/* the operand-less decode agrees on everything it sets */
		struct cp_x86_insn fl;
		assert_int_equal(cp_x86_decode_flow(e->bytes, e->n, AT, &fl), len);
		if (fl.flow != in.flow || fl.cond != in.cond || fl.target != in.target ||
		    fl.opkind != in.opkind || fl.mnemonic != in.mnemonic ||
		    fl.rip_relative != in.rip_relative || fl.mem_addr != in.mem_addr ||
		    fl.disp_offset != in.disp_offset || fl.rel_offset != in.rel_offset ||
		    fl.nops != in.nops)
			fail_msg("%s: cp_x86_decode_flow differs", e->what);
	}
}

static void test_operands(void **state)
{
	(void)state;
	struct cp_x86_insn in;
	/* movslq (%rdx,%rax,4),%rax */
	const uint8_t movslq[] = {0x48, 0x63, 0x04, 0x82};
	assert_int_equal(cp_x86_decode(movslq, sizeof(movslq), AT, &in), 4);
	assert_int_equal(in.opkind, CP_X86_OP_MOVSXD);
	assert_int_equal(in.op[0].kind, CP_X86_OPND_REG);
	assert_int_equal(in.op[0].reg, CP_X86_RAX);
	assert_int_equal(in.op[1].kind, CP_X86_OPND_MEM);
	assert_true(in.has_mem);
	assert_int_equal(in.mem.base, CP_X86_RDX);
	assert_int_equal(in.mem.index, CP_X86_RAX);
	assert_int_equal(in.mem.scale, 4);
	assert_int_equal(in.mem.size, 4);
	assert_int_equal(in.mem.disp, 0);
	/* jmp *0x601000(,%rax,8) */
	const uint8_t jmpt[] = {0xff, 0x24, 0xc5, 0x00, 0x10, 0x60, 0x00};
	assert_int_equal(cp_x86_decode(jmpt, sizeof(jmpt), AT, &in), 7);
	assert_int_equal(in.flow, CP_X86_FLOW_JMP_INDIRECT);
	assert_int_equal(in.mem.base, CP_X86_REG_NONE);
	assert_int_equal(in.mem.index, CP_X86_RAX);
	assert_int_equal(in.mem.scale, 8);
	assert_int_equal(in.mem.disp, 0x601000);
	assert_false(in.rip_relative);
	/* cmp $3,%edi: the 32-bit register maps to its 64-bit parent */
	const uint8_t cmp[] = {0x83, 0xff, 0x03};
	assert_int_equal(cp_x86_decode(cmp, sizeof(cmp), AT, &in), 3);
	assert_int_equal(in.opkind, CP_X86_OP_CMP);
	assert_int_equal(in.op[0].reg, CP_X86_RDI);
	assert_int_equal(in.op[0].size, 4);
	assert_int_equal(in.op[1].kind, CP_X86_OPND_IMM);
	assert_int_equal(in.op[1].imm, 3);
	/* add %r9,%r15 */
	const uint8_t add[] = {0x4d, 0x01, 0xcf};
	assert_int_equal(cp_x86_decode(add, sizeof(add), AT, &in), 3);
	assert_int_equal(in.opkind, CP_X86_OP_ADD);
	assert_int_equal(in.op[0].reg, CP_X86_R15);
	assert_int_equal(in.op[1].reg, CP_X86_R9);
	/* lea with rip: base reported as RIP */
	const uint8_t lea[] = {0x48, 0x8d, 0x15, 0x00, 0x00, 0x00, 0x00};
	assert_int_equal(cp_x86_decode(lea, sizeof(lea), AT, &in), 7);
	assert_int_equal(in.mem.base, CP_X86_RIP);
	assert_int_equal(in.mem.size, 0);
	assert_int_equal(in.op[0].reg, CP_X86_RDX);
	/* xmm operand: OTHER */
	const uint8_t movaps[] = {0x0f, 0x28, 0xc1};
	assert_int_equal(cp_x86_decode(movaps, sizeof(movaps), AT, &in), 3);
	assert_int_equal(in.op[0].reg, CP_X86_REG_OTHER);
}

static void test_names_and_format(void **state)
{
	(void)state;
	struct cp_x86_insn in;
	const uint8_t call[] = {0xe8, 0x10, 0x00, 0x00, 0x00};
	assert_int_equal(cp_x86_decode(call, sizeof(call), AT, &in), 5);
	assert_string_equal(cp_x86_mnemonic_name(in.mnemonic), "call");
	assert_string_equal(cp_x86_mnemonic_name(65535), "?");
	char buf[96];
	assert_int_equal(cp_x86_format(call, sizeof(call), AT, buf, sizeof(buf)), 0);
	assert_non_null(strstr(buf, "call"));
	if (!strstr(buf, "0x1015"))
		fail_msg("formatted as \"%s\"", buf);
	const uint8_t lea[] = {0x48, 0x8d, 0x05, 0x78, 0x56, 0x34, 0x12};
	assert_int_equal(cp_x86_format(lea, sizeof(lea), AT, buf, sizeof(buf)), 0);
	assert_non_null(strstr(buf, "lea"));
	assert_non_null(strstr(buf, "%rax"));
	const uint8_t bad[] = {0x06};
	assert_int_equal(cp_x86_format(bad, 1, AT, buf, sizeof(buf)), -1);
	assert_string_equal(buf, "");
}

static void test_call_before(void **state)
{
	(void)state;
	uint64_t target;
	/* ... call rel32 | retaddr */
	const uint8_t direct[] = {0x90, 0x90, 0xe8, 0x10, 0x00, 0x00, 0x00};
	uint64_t ret = 0x2000;
	assert_true(cp_x86_is_call_before(direct + sizeof(direct), sizeof(direct), ret, &target));
	assert_int_equal(target, ret + 0x10);
	/* call *%rax */
	const uint8_t reg[] = {0x90, 0x90, 0x90, 0xff, 0xd0};
	assert_true(cp_x86_is_call_before(reg + sizeof(reg), sizeof(reg), ret, &target));
	assert_int_equal(target, 0);
	/* call *0x8(%rip) (6 bytes) and call *0x10(%rbx) (3 bytes) */
	const uint8_t mem[] = {0xff, 0x15, 0x08, 0x00, 0x00, 0x00};
	assert_true(cp_x86_is_call_before(mem + 6, 6, ret, NULL));
	const uint8_t mem2[] = {0x48, 0x89, 0xc7, 0xff, 0x53, 0x10};
	assert_true(cp_x86_is_call_before(mem2 + 6, 6, ret, NULL));
	/* no call: nops, a jmp, a push of an immediate that contains e8 */
	const uint8_t nops[] = {0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90};
	assert_false(cp_x86_is_call_before(nops + 8, 8, ret, &target));
	const uint8_t jmp[] = {0xe9, 0x10, 0x00, 0x00, 0x00};
	assert_false(cp_x86_is_call_before(jmp + 5, 5, ret, NULL));
	/* too few bytes available */
	assert_false(cp_x86_is_call_before(direct + sizeof(direct), 4, ret, NULL));
	assert_false(cp_x86_is_call_before(direct + sizeof(direct), 0, ret, NULL));
}

static void test_random_bytes(void **state)
{
	(void)state;
	uint8_t buf[32];
	for (unsigned seed = 1; seed <= 20000; seed++) {
		srand(seed);
		for (size_t i = 0; i < sizeof(buf); i++)
			buf[i] = (uint8_t)rand();
		size_t n = 1 + (size_t)rand() % sizeof(buf);
		struct cp_x86_insn in;
		unsigned len = cp_x86_decode(buf, n, AT, &in);
		assert_true(len <= n && len <= CP_X86_MAX_INSN);
		if (len) {
			assert_true(in.flow <= CP_X86_FLOW_TRAP);
			assert_true(in.rel_offset + in.rel_size <= len);
			assert_true(in.disp_offset + in.disp_size <= len);
		}
		cp_x86_is_call_before(buf + n, n, AT, NULL);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_encodings),	     cmocka_unit_test(test_operands),
	    cmocka_unit_test(test_names_and_format), cmocka_unit_test(test_call_before),
	    cmocka_unit_test(test_random_bytes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
