/* The patch engine on hand-assembled functions (encodings checked with
 * `objdump -D -b binary -m i386:x86-64`): each is run before patching, patched to a
 * counting handler, run again (same result, count incremented), reverted. Plus every
 * refusal reason and a patch/revert race against a thread calling the function. */
#include "arch/x86_64/relocate.h"
#include "patch/patch.h"

#include <elf.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <cmocka.h>

/* The stub pushes r11 and puts the cookie in r11: count the call, restore r11 and
 * continue in the trampoline (ret through the word r11 was saved in). */
struct cookie {
	uint64_t count;
	uint64_t tramp;
};
void test_handler(void);
__asm__(".text\n"
	".globl test_handler\n"
	"test_handler:\n"
	"  lock incq (%r11)\n"
	"  push %rax\n"
	"  mov 8(%r11), %rax\n"
	"  mov 8(%rsp), %r11\n"
	"  mov %rax, 8(%rsp)\n"
	"  pop %rax\n"
	"  ret\n");

typedef long (*fn4)(long, long, long, long);

static uint8_t *region;

/* What a runtime provides for writing into running code: the SIGTRAP emulation and the
 * pc queries (here on SIGUSR1). */
static void on_trap(int sig, siginfo_t *si, void *uc)
{
	if (!cp_patch_trap(uc))
		abort();
}

static void on_query(int sig, siginfo_t *si, void *uc)
{
	cp_patch_pc_report(uc);
}

static int ask(pid_t tid)
{
	return syscall(SYS_tgkill, getpid(), tid, SIGUSR1) ? -1 : 0;
}

static int setup(void **state)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sa.sa_sigaction = on_trap;
	sigaction(SIGTRAP, &sa, NULL);
	sa.sa_sigaction = on_query;
	sigaction(SIGUSR1, &sa, NULL);
	cp_patch_set_pc_query(ask);
	cp_patch_sync_init();
	region = mmap(NULL, 1 << 16, PROT_READ | PROT_WRITE | PROT_EXEC,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return region == MAP_FAILED;
}

static uint8_t *place(unsigned at, const uint8_t *bytes, size_t n)
{
	/* Committing leaves code pages read+execute, as code is. */
	mprotect(region, 1 << 16, PROT_READ | PROT_WRITE | PROT_EXEC);
	memcpy(region + at, bytes, n);
	return region + at;
}

/* Patches fn (size bytes), checks f(args) == want before, after (count 1) and after revert. */
static void roundtrip(uint8_t *fn, size_t size, long a, long d, long want)
{
	struct cookie ck = {0, 0};
	struct cp_patch p;
	fn4 f = (fn4)(void *)fn;
	uint8_t before[8];
	memcpy(before, fn, 8);
	assert_int_equal(f(a, 0, 0, d), want);
	assert_int_equal(
	    cp_patch_prepare((uint64_t)fn, size, (uint64_t)test_handler, (uint64_t)&ck, &p),
	    CP_PATCH_OK);
	ck.tramp = p.trampoline;
	assert_true(cp_patch_owns(p.stub));
	assert_int_equal(cp_patch_commit(&p, 1), CP_PATCH_OK);
	assert_int_equal(fn[0], 0xe9);
	assert_int_equal(f(a, 0, 0, d), want);
	assert_int_equal(f(a, 0, 0, d), want);
	assert_int_equal(ck.count, 2);
	/* A second patch of the same entry is refused. */
	struct cp_patch q;
	assert_int_equal(
	    cp_patch_prepare((uint64_t)fn, size, (uint64_t)test_handler, (uint64_t)&ck, &q),
	    CP_PATCH_ALREADY);
	assert_int_equal(cp_patch_revert(&p, 1), CP_PATCH_OK);
	assert_memory_equal(before, fn, 8);
	assert_int_equal(f(a, 0, 0, d), want);
	assert_int_equal(ck.count, 2);
}

static void test_push_rbp_prologue(void **state)
{
	/* push rbp; mov rbp,rsp; mov eax,edi; add eax,1; pop rbp; ret */
	static const uint8_t c[] = {0x55, 0x48, 0x89, 0xe5, 0x89, 0xf8,
				    0x83, 0xc0, 0x01, 0x5d, 0xc3};
	roundtrip(place(0x000, c, sizeof c), sizeof c, 41, 0, 42);
}

static void test_endbr64(void **state)
{
	/* endbr64; lea eax,[rdi+1]; ret */
	static const uint8_t c[] = {0xf3, 0x0f, 0x1e, 0xfa, 0x8d, 0x47, 0x01, 0xc3};
	struct cp_patch_plan plan;
	uint8_t *fn = place(0x100, c, sizeof c);
	assert_int_equal(cp_patch_plan(fn, sizeof c, (uint64_t)fn, &plan), CP_PATCH_OK);
	assert_int_equal(plan.n, 7);
	assert_int_equal(plan.ninsn, 2);
	roundtrip(fn, sizeof c, 9, 0, 10);
}

static void test_rip_relative_mov(void **state)
{
	/* mov eax,[rip+0x3a] (the data word at +0x40); ret */
	static const uint8_t c[] = {0x8b, 0x05, 0x3a, 0x00, 0x00, 0x00, 0xc3};
	uint8_t *fn = place(0x200, c, sizeof c);
	uint32_t v = 1234;
	memcpy(fn + 0x40, &v, 4);
	roundtrip(fn, sizeof c, 0, 0, 1234);
}

static void test_call_rel32(void **state)
{
	/* sub rsp,8; call helper; add rsp,8; ret -- helper: mov rax,[rsp]; ret (at +0x40)
	 * returns its return address: the moved call must still return into the original
	 * function (fn + 9), not into the trampoline, so unwinders see the real caller. */
	static const uint8_t c[] = {0x48, 0x83, 0xec, 0x08, 0xe8, 0x37, 0x00,
				    0x00, 0x00, 0x48, 0x83, 0xc4, 0x08, 0xc3};
	static const uint8_t helper[] = {0x48, 0x8b, 0x04, 0x24, 0xc3};
	uint8_t *fn = place(0x300, c, sizeof c);
	place(0x340, helper, sizeof helper);
	roundtrip(fn, sizeof c, 0, 0, (long)(uintptr_t)(fn + 9));
}

static void test_jmp_rel8_into_moved_bytes(void **state)
{
	/* jmp +1 (to the lea); int3; lea eax,[rdi+5]; ret: the jump target moves too */
	static const uint8_t c[] = {0xeb, 0x01, 0xcc, 0x8d, 0x47, 0x05, 0xc3};
	roundtrip(place(0x400, c, sizeof c), sizeof c, 1, 0, 6);
}

static void test_jcc_rel8_into_moved_bytes(void **state)
{
	/* stc; jc +1 (over the int3, to the lea); int3; lea eax,[rdi+5]; ret */
	static const uint8_t c[] = {0xf9, 0x72, 0x01, 0xcc, 0x8d, 0x47, 0x05, 0xc3};
	uint8_t *fn = place(0x500, c, sizeof c);
	struct cp_patch_plan plan;
	assert_int_equal(cp_patch_plan(fn, sizeof c, (uint64_t)fn, &plan), CP_PATCH_OK);
	assert_int_equal(plan.n, 7);
	assert_int_equal(plan.ninsn, 4);
	roundtrip(fn, sizeof c, 0, 0, 5);
	roundtrip(fn, sizeof c, 3, 0, 8);
}

static void test_jcc_rel8_out_widened(void **state)
{
	/* mov eax,edi; test edi,edi; je +2 (to ret); inc eax; ret */
	static const uint8_t c[] = {0x89, 0xf8, 0x85, 0xff, 0x74, 0x02, 0xff, 0xc0, 0xc3};
	uint8_t *fn = place(0x600, c, sizeof c);
	roundtrip(fn, sizeof c, 0, 0, 0);
	roundtrip(fn, sizeof c, 4, 0, 5);
}

static void test_jrcxz(void **state)
{
	/* mov eax,edi; jrcxz +3 (to ret); add eax,1; ret: f(x,_,_,c) = c ? x+1 : x */
	static const uint8_t c[] = {0x89, 0xf8, 0xe3, 0x03, 0x83, 0xc0, 0x01, 0xc3};
	uint8_t *fn = place(0x700, c, sizeof c);
	roundtrip(fn, sizeof c, 10, 0, 10);
	roundtrip(fn, sizeof c, 10, 1, 11);
}

static void test_relocate_encodings(void **state)
{
	struct cp_x86_insn in;
	uint8_t out[CP_X86_MAX_RELOC];
	/* je rel8 at 0x1000 to 0x1010 moved to 0x5000: 0f 84 rel32 */
	static const uint8_t je[] = {0x74, 0x0e};
	assert_int_equal(cp_x86_decode(je, 2, 0x1000, &in), 2);
	assert_int_equal(cp_x86_reloc_size(je, &in), 6);
	assert_int_equal(cp_x86_relocate(je, &in, 0x5000, in.target, out), 6);
	static const uint8_t je32[] = {0x0f, 0x84, 0x0a, 0xc0, 0xff, 0xff};
	assert_memory_equal(out, je32, 6);
	/* mov rax,[rip+0x10] at 0x1000 (reads 0x1017) moved to 0x2000 */
	static const uint8_t mov[] = {0x48, 0x8b, 0x05, 0x10, 0x00, 0x00, 0x00};
	assert_int_equal(cp_x86_decode(mov, 7, 0x1000, &in), 7);
	assert_int_equal(cp_x86_relocate(mov, &in, 0x2000, 0, out), 7);
	int32_t disp;
	memcpy(&disp, out + 3, 4);
	assert_int_equal(0x2007 + disp, 0x1017);
	/* out of rel32 range: refused */
	assert_int_equal(cp_x86_relocate(mov, &in, 0x100000000ull, 0, out), 0);
	/* cmpl $5,[rip+0] (an immediate after the displacement) */
	static const uint8_t cmp[] = {0x83, 0x3d, 0x00, 0x00, 0x00, 0x00, 0x05};
	assert_int_equal(cp_x86_decode(cmp, 7, 0x1000, &in), 7);
	assert_int_equal(cp_x86_relocate(cmp, &in, 0x1100, 0, out), 7);
	memcpy(&disp, out + 2, 4);
	assert_int_equal(disp, -0x100);
	assert_int_equal(out[6], 5);
}

static int plan_status(const uint8_t *c, size_t n)
{
	struct cp_patch_plan plan;
	return cp_patch_plan(c, n, 0x400000, &plan);
}

static void test_refusals(void **state)
{
	/* xor eax,eax; ret */
	static const uint8_t tiny[] = {0x31, 0xc0, 0xc3};
	assert_int_equal(plan_status(tiny, sizeof tiny), CP_PATCH_TOO_SHORT);
	/* xor eax,eax; inc eax; ret (5 bytes, but the ret ends at 5: fine) vs 4 bytes */
	static const uint8_t four[] = {0x31, 0xc0, 0xff, 0xc0};
	assert_int_equal(plan_status(four, sizeof four), CP_PATCH_TOO_SHORT);
	/* mov eax,0x1234567 truncated by the symbol's end (4 of 5 bytes) */
	static const uint8_t cut[] = {0x90, 0xb8, 0x67, 0x45, 0x23, 0x01};
	assert_int_equal(plan_status(cut, 4), CP_PATCH_TOO_SHORT);
	/* xor eax,eax; L: inc eax; dec edi; jne L; ret -- the loop jumps to byte 2 */
	static const uint8_t loop[] = {0x31, 0xc0, 0xff, 0xc0, 0xff, 0xcf, 0x75, 0xfa, 0xc3};
	struct cp_patch_plan plan;
	assert_int_equal(cp_patch_plan(loop, sizeof loop, 0x400000, &plan), CP_PATCH_JUMP_INTO);
	assert_int_equal(plan.bad_addr, 0x400006);
	/* the same loop starting at byte 0 (the entry) is fine: it runs through the stub */
	static const uint8_t entry_loop[] = {0xff, 0xc0, 0xff, 0xcf, 0x90, 0x75, 0xf9, 0xc3};
	assert_int_equal(plan_status(entry_loop, sizeof entry_loop), CP_PATCH_OK);
	/* a prologue jump into the middle of one of its own instructions */
	static const uint8_t mid[] = {0xeb, 0x01, 0xb8, 0x01, 0x00, 0x00, 0x00, 0xc3};
	assert_int_equal(plan_status(mid, sizeof mid), CP_PATCH_JUMP_INTO);
	/* xbegin rel32 in the prologue */
	static const uint8_t xbegin[] = {0xc7, 0xf8, 0x00, 0x00, 0x00, 0x00, 0xc3};
	assert_int_equal(plan_status(xbegin, sizeof xbegin), CP_PATCH_UNSUPPORTED);
	/* 0x06 (push es) does not exist in 64-bit mode */
	static const uint8_t bad[] = {0x06, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90,
				      0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0xc3};
	assert_int_equal(plan_status(bad, sizeof bad), CP_PATCH_UNDECODABLE);
	/* symbols */
	assert_int_equal(cp_patch_check_symbol(STT_GNU_IFUNC, 32, ".text", 1), CP_PATCH_IFUNC);
	assert_int_equal(cp_patch_check_symbol(STT_FUNC, 16, ".plt", 1), CP_PATCH_PLT);
	assert_int_equal(cp_patch_check_symbol(STT_FUNC, 16, ".plt.sec", 1), CP_PATCH_PLT);
	assert_int_equal(cp_patch_check_symbol(STT_FUNC, 16, ".data", 0), CP_PATCH_NOT_EXEC);
	assert_int_equal(cp_patch_check_symbol(STT_OBJECT, 16, ".text", 1), CP_PATCH_NOT_FUNC);
	assert_int_equal(cp_patch_check_symbol(STT_FUNC, 0, ".text", 1), CP_PATCH_NOT_FUNC);
	assert_int_equal(cp_patch_check_symbol(STT_FUNC, 3, ".text", 1), CP_PATCH_TOO_SHORT);
	assert_int_equal(cp_patch_check_symbol(STT_FUNC, 30, ".text", 1), CP_PATCH_OK);
	assert_int_equal(cp_patch_check_name("_setjmp"), CP_PATCH_RETURNS_TWICE);
	assert_int_equal(cp_patch_check_name("vfork"), CP_PATCH_RETURNS_TWICE);
	assert_int_equal(cp_patch_check_name("setjmp_like_but_not"), CP_PATCH_OK);
	for (int s = 0; s < CP_PATCH_NSTATUS; s++)
		assert_true(strlen(cp_patch_status_str(s)) > 1);
}

static void test_straddle(void **state)
{
	/* lea eax,[rdi+1]; nop*4; ret placed at 16n+13: the jump would cross the line */
	static const uint8_t c[] = {0x8d, 0x47, 0x01, 0x90, 0x90, 0x90, 0x90, 0xc3};
	uint8_t *fn = place(0x80d, c, sizeof c);
	struct cookie ck = {0, 0};
	struct cp_patch p;
	assert_int_equal(
	    cp_patch_prepare((uint64_t)fn, sizeof c, (uint64_t)test_handler, (uint64_t)&ck, &p),
	    CP_PATCH_OK);
	ck.tramp = p.trampoline;
	/* no longer refused: the breakpoint-first write needs no alignment */
	assert_int_equal(cp_patch_commit(&p, 1), CP_PATCH_OK);
	assert_int_equal(((fn4)(void *)fn)(1, 0, 0, 0), 2);
	assert_int_equal(ck.count, 1);
	assert_int_equal(cp_patch_revert(&p, 0), CP_PATCH_OK);
	/* at 16n+9 one cmpxchg16b covers it */
	fn = place(0x909, c, sizeof c);
	assert_int_equal(
	    cp_patch_prepare((uint64_t)fn, sizeof c, (uint64_t)test_handler, (uint64_t)&ck, &p),
	    CP_PATCH_OK);
	ck.tramp = p.trampoline;
	assert_int_equal(cp_patch_commit(&p, 1), CP_PATCH_OK);
	assert_int_equal(((fn4)(void *)fn)(1, 0, 0, 0), 2);
	assert_int_equal(ck.count, 2);
	assert_int_equal(cp_patch_revert(&p, 1), CP_PATCH_OK);
}

static volatile int race_stop;
static volatile long race_bad, race_calls;

static void *race_caller(void *arg)
{
	fn4 f = (fn4)arg;
	while (!race_stop) {
		if (f(20, 0, 0, 0) != 21)
			race_bad++;
		race_calls++;
	}
	return NULL;
}

static void test_patch_while_running(void **state)
{
	/* push rbp; mov rbp,rsp; lea rax,[rdi+1]; pop rbp; ret: instruction boundaries at
	 * bytes 1 and 4, inside the 5 patched ones (docs/internals/patch.md). At 16n+2 and
	 * 16n+13 (crossing a 16-byte line). */
	static const uint8_t c[] = {0x55, 0x48, 0x89, 0xe5, 0x48, 0x8d, 0x47, 0x01, 0x5d, 0xc3};
	static const unsigned at[2] = {0xa02, 0xb0d};
	for (int k = 0; k < 2; k++) {
		uint8_t *fn = place(at[k], c, sizeof c);
		struct cookie ck = {0, 0};
		struct cp_patch p;
		pthread_t th;
		race_stop = 0;
		race_calls = 0;
		assert_int_equal(cp_patch_prepare((uint64_t)fn, sizeof c, (uint64_t)test_handler,
						  (uint64_t)&ck, &p),
				 CP_PATCH_OK);
		ck.tramp = p.trampoline;
		assert_int_equal(pthread_create(&th, NULL, race_caller, fn), 0);
		for (int i = 0; i < 2000; i++) {
			assert_int_equal(cp_patch_commit(&p, 1), CP_PATCH_OK);
			assert_int_equal(cp_patch_revert(&p, 1), CP_PATCH_OK);
		}
		race_stop = 1;
		pthread_join(th, NULL);
		assert_int_equal(race_bad, 0);
		assert_true(ck.count <= (uint64_t)race_calls);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_push_rbp_prologue),
	    cmocka_unit_test(test_endbr64),
	    cmocka_unit_test(test_rip_relative_mov),
	    cmocka_unit_test(test_call_rel32),
	    cmocka_unit_test(test_jmp_rel8_into_moved_bytes),
	    cmocka_unit_test(test_jcc_rel8_into_moved_bytes),
	    cmocka_unit_test(test_jcc_rel8_out_widened),
	    cmocka_unit_test(test_jrcxz),
	    cmocka_unit_test(test_relocate_encodings),
	    cmocka_unit_test(test_refusals),
	    cmocka_unit_test(test_straddle),
	    cmocka_unit_test(test_patch_while_running),
	};
	return cmocka_run_group_tests(tests, setup, NULL);
}
