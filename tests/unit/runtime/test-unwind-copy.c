/* cp_unwind_copy, the unwinder of the kernel-copy driver: registers plus a copy of the top
 * of a stack, read nowhere else. The reference is the live unwind of the same context
 * (cp_unwind_context): the same frames from a copy held elsewhere; a return address
 * changed in the copy changes the result (the copy is what is read); a short copy ends
 * the walk inside it, never reads past it. */
#pragma GCC optimize("O2", "omit-frame-pointer")
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>
#include <cmocka.h>

#include "runtime/unwind/modules.h"
#include "runtime/unwind/unwind.h"

#define NOINLINE __attribute__((noinline, noclone))
#define MAXF 64

static ucontext_t ctx;
static unsigned char *copy;
static size_t copy_len;
static volatile unsigned long sink;

/* DWARF numbering of the ucontext's registers. */
static void regs_from(const ucontext_t *uc, struct cp_unwind_copy *c)
{
	static const int greg[17] = {REG_RAX, REG_RDX, REG_RCX, REG_RBX, REG_RSI, REG_RDI,
				     REG_RBP, REG_RSP, REG_R8,	REG_R9,	 REG_R10, REG_R11,
				     REG_R12, REG_R13, REG_R14, REG_R15, REG_RIP};
	for (int i = 0; i < 17; i++)
		c->regs[i] = (uintptr_t)uc->uc_mcontext.gregs[greg[i]];
	c->known = (1u << 17) - 1;
}

static struct cp_frame live[MAXF];
static int nlive;
static enum cp_unwind_status live_status;

/* The deepest frame: its context, the live unwind of it, and a copy of 64 KiB of stack. */
NOINLINE static void deep(void)
{
	getcontext(&ctx);
	nlive = cp_unwind_context(&ctx, live, MAXF, &live_status);
	uintptr_t sp = (uintptr_t)ctx.uc_mcontext.gregs[REG_RSP], lo, hi;
	assert_int_equal(cp_unwind_stack(&lo, &hi), 0);
	copy_len = hi - sp < 65536 ? hi - sp : 65536;
	copy = malloc(copy_len);
	memcpy(copy, (void *)sp, copy_len);
	sink++;
}

NOINLINE static void middle(void)
{
	deep();
	sink++;
}

NOINLINE static void outer(void)
{
	middle();
	sink++;
}

static int unwind_copy(size_t len, struct cp_frame *f, enum cp_unwind_status *st)
{
	struct cp_unwind_copy c;

	regs_from(&ctx, &c);
	c.stack_addr = c.regs[7];
	c.stack = copy;
	c.stack_len = len;
	return cp_unwind_copy(&c, f, MAXF, st);
}

static void test_copy_equals_live(void **state)
{
	struct cp_frame f[MAXF];
	enum cp_unwind_status st;
	(void)state;

	outer();
	assert_true(nlive >= 4);
	assert_int_equal(live_status, CP_UNWIND_COMPLETE);
	int n = unwind_copy(copy_len, f, &st);
	assert_int_equal(st, live_status);
	assert_int_equal(n, nlive);
	for (int i = 0; i < n; i++)
		assert_int_equal(f[i].pc, live[i].pc);
}

/* The return address into outer (frame 2), changed in the copy only: the copy's walk
 * reports the changed value, so it read the copy. */
static void test_reads_the_copy(void **state)
{
	struct cp_frame f[MAXF];
	enum cp_unwind_status st;
	uintptr_t sp = (uintptr_t)ctx.uc_mcontext.gregs[REG_RSP], want = live[2].pc;
	size_t at = SIZE_MAX;
	(void)state;

	for (size_t off = 0; off + 8 <= copy_len; off += 8)
		if (*(uintptr_t *)(copy + off) == want) {
			at = off;
			break;
		}
	assert_true(at != SIZE_MAX);
	*(uintptr_t *)(copy + at) = want + 1;
	int n = unwind_copy(copy_len, f, &st);
	*(uintptr_t *)(copy + at) = want;
	assert_true(n >= 3);
	assert_int_equal(f[2].pc, want + 1);
	(void)sp;
}

/* Copies too short for the walk: it stops inside them (partial, or frame 0 only). */
static void test_short_copy(void **state)
{
	struct cp_frame f[MAXF];
	enum cp_unwind_status st;
	(void)state;

	int n = unwind_copy(0, f, &st);
	assert_int_equal(n, 1);
	assert_int_equal(f[0].pc, live[0].pc);
	n = unwind_copy(16, f, &st);
	assert_true(n >= 1 && n < nlive);
	assert_int_not_equal(st, CP_UNWIND_COMPLETE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_copy_equals_live),
	    cmocka_unit_test(test_reads_the_copy),
	    cmocka_unit_test(test_short_copy),
	};
	if (cp_unwind_init() || cp_modules_init(NULL))
		return 1;
	cp_unwind_thread_init();
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	free(copy);
	return rc;
}
