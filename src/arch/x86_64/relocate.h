/* Moving x86-64 instructions to another address, and the few encodings the patch engine
 * writes (jmp rel32, an absolute jmp, movabs into r11). Pure functions: no global state,
 * no malloc, usable from any thread (the runtime patches functions of running programs).
 *
 * A relocated instruction behaves as the original did at its old address: RIP-relative
 * memory operands are re-aimed at the same absolute address, direct calls and jumps at the
 * target the caller passes (normally the original target; the patch engine passes the new
 * place of a target that was itself moved). Short branches are widened to rel32 so any
 * target within +-2 GiB is reachable; jrcxz/loop (rel8 only) become a three-instruction
 * sequence. Anything else that is position-dependent (xbegin, 8/16-bit displacements) is
 * refused: size 0. */
#ifndef CP_ARCH_X86_64_RELOCATE_H
#define CP_ARCH_X86_64_RELOCATE_H

#include "arch/x86_64/decode.h"

#include <stdint.h>

/* Longest relocated form of one instruction (jrcxz/loop with prefixes: 15 + 2 + 5). */
#define CP_X86_MAX_RELOC 24
#define CP_X86_JMP32_LEN 5
#define CP_X86_JMP_ABS_LEN 14
#define CP_X86_MOVABS_R11_LEN 10

/* Bytes the relocated copy of insn takes, or 0 when it cannot be relocated exactly.
 * Depends only on the instruction, not on where it goes (so layouts can be planned before
 * targets are known). */
unsigned cp_x86_reloc_size(const uint8_t *bytes, const struct cp_x86_insn *insn);

/* Writes the copy of insn (original bytes `bytes`, decoded as insn) placed at new_addr into
 * out (room for cp_x86_reloc_size bytes). A direct branch or call goes to `target`; other
 * instructions ignore it. Returns the bytes written, or 0 when the instruction cannot be
 * relocated or a displacement does not fit in 32 bits from new_addr. */
unsigned cp_x86_relocate(const uint8_t *bytes, const struct cp_x86_insn *insn, uint64_t new_addr,
			 uint64_t target, uint8_t *out);

/* True when a rel32 at an instruction ending at `end` reaches target. */
int cp_x86_rel32_fits(uint64_t end, uint64_t target);
/* jmp rel32 at `at` to target: 5 bytes, or 0 when out of range. */
unsigned cp_x86_encode_jmp32(uint8_t *out, uint64_t at, uint64_t target);
/* jmp *0(%rip) followed by the 8-byte target: 14 bytes, any distance. */
unsigned cp_x86_encode_jmp_abs(uint8_t *out, uint64_t target);
/* A call of target that returns to ret_addr instead of the next instruction, for a call
 * moved out of a patched prologue: its callee returns into the original function (whose
 * bytes after the patched ones are intact), so unwinders and exceptions see the real
 * caller. lea -8(%rsp),%rsp; push %rax; lea ret(%rip),%rax; mov %rax,8(%rsp); pop %rax;
 * jmp target -- no register or flag changes. CP_X86_CALL_RET_LEN bytes, or 0 when a
 * displacement does not fit. */
#define CP_X86_CALL_RET_LEN 24
unsigned cp_x86_encode_call_returning(uint8_t *out, uint64_t at, uint64_t ret_addr,
				      uint64_t target);
/* movabs $imm, %r11: 10 bytes. */
unsigned cp_x86_encode_movabs_r11(uint8_t *out, uint64_t imm);

#endif
