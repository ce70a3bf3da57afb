/* Unwinding from signal handlers in code built without frame pointers: a known call
 * chain, libc frames (qsort, nanosleep), prologues/epilogues of a big frame, PLT stubs,
 * threads, cp_unwind_here. Expected frames are named independently, from the test
 * binary's own .symtab and dladdr. */
#pragma GCC optimize("O2", "omit-frame-pointer")
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdlib.h>
#include <cmocka.h>

#include "runtime/unwind/modules.h"
#include "test-unwind-util.h"

#define NOINLINE __attribute__((noinline, noclone))

static volatile unsigned long sink;
static volatile int stop_flag;

static void setup_once(void)
{
	static int done;

	if (done)
		return;
	assert_int_equal(cp_unwind_init(), 0);
	assert_int_equal(cp_modules_init(NULL), 0);
	cp_unwind_thread_init();
	ut_install(SIGPROF, ut_handler);
	done = 1;
}

/* Every sample complete; returns how many contain names[] in order. */
static int check_samples(const char *const *names, int k)
{
	int in_order = 0, bad = 0;

	for (int i = 0; i < ut_nsamples; i++) {
		struct ut_sample *s = &ut_samples[i];
		int ok_order = ut_in_order(s, names, k);
		int ends = s->n > 0 && !strcmp(ut_frame_sym(&s->f[s->n - 1]), "_start");
		in_order += ok_order;
		if (s->status != CP_UNWIND_COMPLETE || !ends) {
			if (bad++ < 3)
				ut_print(s);
		}
	}
	fprintf(stderr, "  %d samples, %d incomplete, %d with the expected chain\n", ut_nsamples,
		bad, in_order);
	assert_int_equal(bad, 0);
	return in_order;
}

/* ---- a -> b -> c, c spinning ---- */
NOINLINE static unsigned long chain_c(unsigned long x)
{
	for (int i = 0; i < 100000; i++)
		x = x * 6364136223846793005ul + 1442695040888963407ul;
	return x;
}

NOINLINE static unsigned long chain_b(unsigned long x)
{
	volatile char pad[256];
	pad[x & 255] = 1;
	unsigned long r = chain_c(x + pad[3]);
	__asm__ volatile("" ::: "memory");
	return r + 1;
}

NOINLINE static unsigned long chain_a(unsigned long x)
{
	unsigned long r = chain_b(x * 3);
	__asm__ volatile("" ::: "memory");
	return r ^ 5;
}

static void test_chain(void **state)
{
	static const char *const names[] = {"chain_c", "chain_b", "chain_a", "test_chain", "main"};

	(void)state;
	setup_once();
	ut_start(SIGPROF, 100000); /* 10 kHz */
	while (ut_nsamples < 1000)
		sink += chain_a(sink);
	ut_stop();
	if (getenv("UT_VERBOSE"))
		ut_print(&ut_samples[0]);
	assert_true(check_samples(names, 5) > 900);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_chain),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
