/* Unwinding from signal handlers in code built without frame pointers: a known call
 * chain, libc frames (qsort, nanosleep), prologues/epilogues of a big frame, PLT stubs,
 * threads, cp_unwind_here. Expected frames are named independently, from the test
 * binary's own .symtab and dladdr. */
#pragma GCC optimize("O2", "omit-frame-pointer")
#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdlib.h>
#include <cmocka.h>

#include "runtime/unwind/modules.h"
#include "runtime/unwind/unwind-internal.h"
#include "test-unwind-util.h"

#define NOINLINE __attribute__((noinline, noclone))

static volatile unsigned long sink;

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

/* Samples whose frame 0 is in names[0] must continue with names[1..k) exactly (no
 * skipped or invented frame); returns how many such samples there were. */
static int check_adjacent(const char *const *names, int k)
{
	int hits = 0;

	for (int i = 0; i < ut_nsamples; i++) {
		struct ut_sample *s = &ut_samples[i];
		if (s->n < k || strcmp(ut_frame_sym(&s->f[0]), names[0]))
			continue;
		hits++;
		for (int j = 1; j < k; j++) {
			if (strcmp(ut_frame_sym(&s->f[j]), names[j])) {
				ut_print(s);
				fail_msg("frame %d is %s, expected %s", j, ut_frame_sym(&s->f[j]),
					 names[j]);
			}
		}
	}
	return hits;
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

/* ---- malloc interposition: no allocation while unwinding ---- */
#define COUNT_MALLOC_WHEN ut_in_unwind
#include "count-malloc.h"

/* ---- prologues and epilogues: tiny functions with big frames / many pushes ---- */
NOINLINE static int big_frame(int x)
{
	volatile char buf[20000];
	buf[x % 20000] = (char)x;
	return buf[(x * 7) % 20000];
}

NOINLINE static long pushy(long x)
{
	long a = x * 3, b = x ^ 7, c = x + 11, d = x * x, e = x - 5, f = x | 9;
	sink += big_frame((int)x); /* values live across the call force callee-saved pushes */
	return a + b + c + d + e + f;
}

NOINLINE static void run_frames(void)
{
	for (int i = 0; i < 1000; i++)
		sink += pushy(i);
}

static void test_prologue_epilogue(void **state)
{
	static const char *const n1[] = {"big_frame", "pushy", "run_frames",
					 "test_prologue_epilogue"};
	static const char *const n2[] = {"pushy", "run_frames", "test_prologue_epilogue"};
	int edge = 0;

	(void)state;
	setup_once();
	ut_start(SIGPROF, 100000);
	while (ut_nsamples < 3000)
		run_frames();
	ut_stop();
	check_samples(n2 + 1, 2);
	assert_true(check_adjacent(n1, 4) > 0);
	assert_true(check_adjacent(n2, 3) > 0);
	for (int i = 0; i < ut_nsamples; i++) {
		uintptr_t pc = ut_samples[i].f[0].pc;
		edge += (pc >= (uintptr_t)big_frame && pc < (uintptr_t)big_frame + 24) ||
			(pc >= (uintptr_t)pushy && pc < (uintptr_t)pushy + 24);
	}
	fprintf(stderr, "  %d samples within 24 bytes of a function entry\n", edge);
}

/* ---- PLT stubs: a tight loop of calls to strlen through the PLT ---- */
static const char *volatile plt_str = "";

NOINLINE static void run_plt(void)
{
	for (int i = 0; i < 10000; i++)
		sink += strlen(plt_str);
}

NOINLINE static void run_plt_once(void)
{
	sink += strlen(plt_str);
	__asm__ volatile("" ::: "memory");
}

static void test_plt(void **state)
{
	static const char *const names[] = {"run_plt", "test_plt", "main"};
	int in_plt = 0;

	(void)state;
	setup_once();
	ut_symtab_load();
	ut_start(SIGPROF, 100000);
	while (ut_nsamples < 3000)
		run_plt();
	ut_stop();
	check_samples(names, 3);
	for (int i = 0; i < ut_nsamples; i++) {
		struct ut_sample *s = &ut_samples[i];
		if (s->f[0].pc >= ut_st.plt_lo && s->f[0].pc < ut_st.plt_hi) {
			in_plt++;
			if (strcmp(ut_frame_sym(&s->f[1]), "run_plt")) {
				ut_print(s);
				fail_msg("sample in a PLT stub lost its caller");
			}
		}
	}
	fprintf(stderr, "  %d samples in PLT stubs\n", in_plt);
}

/* ---- single-stepping (EFLAGS.TF): an unwind at EVERY instruction of a region that
 * covers prologues, epilogues, a PLT stub, libc's strlen and memcpy, and the tail of
 * raise() in libc ---- */
static volatile int stepping;
static int step_count, step_bad, step_plt, step_entry;

NOINLINE static void step_end(void)
{
	__asm__ volatile("" ::: "memory");
}

NOINLINE static void step_region(void)
{
	static char dst[64];
	sink += pushy(1);
	sink += strlen(plt_str);
	memcpy(dst, (const void *)plt_str, 1);
	sink += dst[0];
	run_plt_once();
	sink += snprintf(dst, sizeof(dst), "%d %s %.3f", (int)sink, plt_str, 2.5);
	sink += strtol("12345", NULL, 10) + (long)strtod("2.5e3", NULL);
}

static void step_trap(int sig, siginfo_t *si, void *ucv)
{
	ucontext_t *uc = ucv;
	struct ut_sample *s = &ut_samples[0];
	uintptr_t pc = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
	enum cp_unwind_status st;

	(void)sig;
	(void)si;
	if (!stepping)
		return;
	if (pc == (uintptr_t)step_end) {
		uc->uc_mcontext.gregs[REG_EFL] &= ~0x100;
		stepping = 0;
		return;
	}
	ut_in_unwind = 1;
	s->n = cp_unwind_context(uc, s->f, UT_MAX_FRAMES, &st);
	ut_in_unwind = 0;
	s->status = st;
	step_count++;
	step_plt += pc >= ut_st.plt_lo && pc < ut_st.plt_hi;
	step_entry += pc == (uintptr_t)big_frame || pc == (uintptr_t)pushy;
	if (st != CP_UNWIND_COMPLETE || ut_find(s, 0, "test_single_step") < 0) {
		if (step_bad++ < 3)
			ut_print(s);
	}
}

static void step_start(int sig, siginfo_t *si, void *ucv)
{
	ucontext_t *uc = ucv;
	(void)sig;
	(void)si;
	stepping = 1;
	uc->uc_mcontext.gregs[REG_EFL] |= 0x100; /* trap after every instruction */
}

static void test_single_step(void **state)
{
	(void)state;
	setup_once();
	ut_symtab_load();
	ut_install(SIGTRAP, step_trap);
	ut_install(SIGUSR2, step_start);
	run_plt_once(); /* resolve lazy bindings before stepping */
	raise(SIGUSR2);
	step_region();
	step_end();
	fprintf(stderr, "  %d instructions stepped, %d incomplete, %d in PLT stubs\n", step_count,
		step_bad, step_plt);
	assert_int_equal(stepping, 0);
	assert_int_equal(step_bad, 0);
	assert_true(step_count > 100);
	assert_true(step_plt > 0);
	assert_int_equal(step_entry, 2);
}

/* ---- libc frames: qsort with a slow comparator ---- */
NOINLINE static int cmp_slow(const void *a, const void *b)
{
	unsigned long x = *(const int *)a;
	for (int i = 0; i < 50; i++)
		x = x * 6364136223846793005ul + 1;
	sink += x;
	return (*(const int *)a > *(const int *)b) - (*(const int *)a < *(const int *)b);
}

NOINLINE static void run_qsort(int *v, int n)
{
	for (int i = 0; i < n; i++)
		v[i] = (i * 7919) % n;
	qsort(v, n, sizeof(*v), cmp_slow);
	__asm__ volatile("" ::: "memory");
}

static int in_libc(uintptr_t pc)
{
	const struct cp_module *m = cp_modules_find(pc);
	return m && strstr(m->path, "libc.so");
}

static void test_libc_qsort(void **state)
{
	static const char *const names[] = {"cmp_slow", "run_qsort", "test_libc_qsort", "main"};
	static int v[4096];
	int through_libc = 0;

	(void)state;
	setup_once();
	ut_start(SIGPROF, 100000);
	while (ut_nsamples < 2000)
		run_qsort(v, 4096);
	ut_stop();
	check_samples(names + 1, 3);
	for (int i = 0; i < ut_nsamples; i++) {
		struct ut_sample *s = &ut_samples[i];
		int k = ut_find(s, 0, "run_qsort");
		if (strcmp(ut_frame_sym(&s->f[0]), "cmp_slow") || k < 0)
			continue;
		for (int j = 1; j < k; j++)
			assert_true(
			    in_libc(s->f[j].kind == CP_FRAME_RETURN ? s->f[j].pc - 1 : s->f[j].pc));
		through_libc += k >= 2;
	}
	fprintf(stderr, "  %d samples in the comparator, below libc frames\n", through_libc);
	assert_true(through_libc > 100);
}

/* ---- blocked in a system call: nanosleep ---- */
NOINLINE static void run_sleep(void)
{
	struct timespec ts = {0, 2000000};
	nanosleep(&ts, NULL);
	__asm__ volatile("" ::: "memory");
}

static void test_nanosleep(void **state)
{
	static const char *const names[] = {"run_sleep", "test_nanosleep", "main"};
	int in_sleep = 0;

	(void)state;
	setup_once();
	ut_start(SIGPROF, 1000000); /* 1 kHz */
	while (ut_nsamples < 200)
		run_sleep();
	ut_stop();
	check_samples(names, 3);
	for (int i = 0; i < ut_nsamples; i++) {
		struct ut_sample *s = &ut_samples[i];
		int k = ut_find(s, 0, "run_sleep");
		if (k >= 1 && in_libc(s->f[0].pc))
			in_sleep++;
	}
	fprintf(stderr, "  %d samples inside libc's sleep\n", in_sleep);
	assert_true(in_sleep > 100);
}

/* ---- cp_unwind_here, and through a signal frame (with and without sigaltstack) ---- */
static struct ut_sample here_sample;
static uintptr_t here_interrupted_pc;

NOINLINE static void here_b(void)
{
	enum cp_unwind_status st;
	here_sample.n = cp_unwind_here(here_sample.f, UT_MAX_FRAMES, &st);
	here_sample.status = st;
	__asm__ volatile("" ::: "memory");
}

NOINLINE static void here_a(void)
{
	here_b();
	__asm__ volatile("" ::: "memory");
}

static void test_here(void **state)
{
	static const char *const names[] = {"here_b", "here_a", "test_here", "main"};

	(void)state;
	setup_once();
	here_a();
	assert_int_equal(here_sample.status, CP_UNWIND_COMPLETE);
	assert_int_equal(here_sample.f[0].kind, CP_FRAME_RETURN);
	for (int j = 0; j < 3; j++)
		assert_string_equal(ut_frame_sym(&here_sample.f[j]), names[j]);
	assert_true(ut_in_order(&here_sample, names, 4));
	assert_string_equal(ut_frame_sym(&here_sample.f[here_sample.n - 1]), "_start");
}

static void here_handler(int sig, siginfo_t *si, void *ucv)
{
	const ucontext_t *uc = ucv;
	(void)sig;
	(void)si;
	here_interrupted_pc = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
	ut_in_unwind = 1;
	here_a();
	ut_in_unwind = 0;
}

NOINLINE static void raise_in_chain(void)
{
	raise(SIGUSR1);
	__asm__ volatile("" ::: "memory");
}

static void check_through_signal(void)
{
	static const char *const after[] = {"raise_in_chain", "test_through_signal", "main"};
	int k = -1;

	assert_int_equal(here_sample.status, CP_UNWIND_COMPLETE);
	assert_string_equal(ut_frame_sym(&here_sample.f[0]), "here_b");
	assert_string_equal(ut_frame_sym(&here_sample.f[1]), "here_a");
	assert_string_equal(ut_frame_sym(&here_sample.f[2]), "here_handler");
	for (int i = 0; i < here_sample.n; i++)
		if (here_sample.f[i].kind == CP_FRAME_SIGNAL) {
			k = i;
			break;
		}
	if (k < 0 || here_sample.f[k].pc != here_interrupted_pc)
		ut_print(&here_sample);
	assert_true(k == 4); /* here_b, here_a, here_handler, __restore_rt, interrupted pc */
	assert_int_equal(here_sample.f[3].how, CP_HOW_SIGNAL);
	assert_true(here_sample.f[k].pc == here_interrupted_pc);
	assert_true(ut_in_order(&here_sample, after, 3));
}

static void test_through_signal(void **state)
{
	struct sigaction sa;
	stack_t ss, old;
	static char altstack[64 * 1024];

	(void)state;
	setup_once();
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = here_handler;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGUSR1, &sa, NULL);
	memset(&here_sample, 0, sizeof(here_sample));
	raise_in_chain();
	check_through_signal();

	ss.ss_sp = altstack;
	ss.ss_size = sizeof(altstack);
	ss.ss_flags = 0;
	assert_int_equal(sigaltstack(&ss, &old), 0);
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
	sigaction(SIGUSR1, &sa, NULL);
	memset(&here_sample, 0, sizeof(here_sample));
	raise_in_chain();
	check_through_signal();
	ss.ss_flags = SS_DISABLE;
	sigaltstack(&ss, NULL);
}

/* ---- a thread first seen inside the signal handler (AS-safe bounds probe) ---- */
static volatile pid_t worker_tid;
static volatile int worker_stop;

NOINLINE static void *worker_main(void *arg)
{
	(void)arg;
	worker_tid = gettid();
	while (!worker_stop)
		sink += chain_a(sink);
	return NULL;
}

static void test_thread(void **state)
{
	static const char *const names[] = {"chain_c", "chain_b", "chain_a", "worker_main"};
	pthread_t th;

	(void)state;
	setup_once();
	worker_tid = 0;
	worker_stop = 0;
	pthread_create(&th, NULL, worker_main, NULL);
	while (!worker_tid)
		sched_yield();
	ut_start_tid(SIGPROF, 100000, worker_tid);
	while (ut_nsamples < 1000)
		usleep(1000);
	ut_stop();
	worker_stop = 1;
	pthread_join(th, NULL);
	for (int i = 0; i < ut_nsamples; i++) {
		struct ut_sample *s = &ut_samples[i];
		if (s->status != CP_UNWIND_COMPLETE || !in_libc(s->f[s->n - 1].pc - 1))
			ut_print(s);
		assert_int_equal(s->status, CP_UNWIND_COMPLETE);
		assert_true(in_libc(s->f[s->n - 1].pc - 1)); /* ends in clone3 */
	}
	assert_true(check_adjacent(names, 4) > 900);
}

/* ---- corrupt contexts: garbage rsp/rbp/rip end the unwind early, never fault ---- */
static void unwind_synthetic(uintptr_t rip, uintptr_t rsp, uintptr_t rbp, int expect_complete_ok)
{
	ucontext_t uc;
	struct cp_frame f[64];
	enum cp_unwind_status st;
	int n;

	memset(&uc, 0, sizeof(uc));
	uc.uc_mcontext.gregs[REG_RIP] = (greg_t)rip;
	uc.uc_mcontext.gregs[REG_RSP] = (greg_t)rsp;
	uc.uc_mcontext.gregs[REG_RBP] = (greg_t)rbp;
	n = cp_unwind_context(&uc, f, 64, &st);
	assert_true(n >= 1 && n <= 64);
	assert_int_equal(f[0].pc, rip);
	if (!expect_complete_ok)
		assert_true(st == CP_UNWIND_PARTIAL || st == CP_UNWIND_FAILED);
}

static void test_corrupt(void **state)
{
	uintptr_t text = (uintptr_t)chain_b + 4, local = (uintptr_t)&state;
	uintptr_t *junk =
	    mmap(NULL, 1 << 16, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	unsigned long x = 12345;

	setup_once();
	for (int i = 0; i < (1 << 13); i++) { /* random words and plausible text pointers */
		x = x * 6364136223846793005ul + 1442695040888963407ul;
		junk[i] = (i & 3) ? x : text + (x & 0xff);
	}
	junk[(1 << 13) - 1] = (uintptr_t)junk; /* a self-loop for the frame-pointer walk */
	unwind_synthetic(text, 0, 0, 0);
	unwind_synthetic(text, 0x1000, 0x1000, 0);
	unwind_synthetic(text, ~(uintptr_t)0 - 7, ~(uintptr_t)0, 0);
	unwind_synthetic(0xdeadbeef, local, local, 1);
	unwind_synthetic(0, local, 0, 1);
	for (int off = 0; off < 4096; off += 8) {
		unwind_synthetic(text + (off & 63), (uintptr_t)junk + off, junk[off / 8], 0);
		unwind_synthetic(0x1234, (uintptr_t)junk + off, (uintptr_t)junk + off, 0);
	}
	/* the top of our own stack: reads must stop at the end of the mapping */
	unwind_synthetic(text, uw_stack_top() - 8, uw_stack_top() - 16, 0);
	munmap(junk, 1 << 16);
}

/* ---- fallbacks: code without CFI (JIT-like, in an anonymous mapping) ---- */
static struct ut_sample jit_sample;

NOINLINE static void jit_callback(void)
{
	enum cp_unwind_status st;
	jit_sample.n = cp_unwind_here(jit_sample.f, UT_MAX_FRAMES, &st);
	jit_sample.status = st;
	__asm__ volatile("" ::: "memory");
}

NOINLINE static void call_jit(void (*code)(void (*)(void)))
{
	code(jit_callback);
	__asm__ volatile("" ::: "memory");
}

/* Runs code (no CFI, no module) and checks the unwind crosses it with `how`. */
static void check_jit(const uint8_t *bytes, size_t len, uint32_t how)
{
	uint8_t *page =
	    mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int k;

	memcpy(page, bytes, len);
	mprotect(page, 4096, PROT_READ | PROT_EXEC);
	memset(&jit_sample, 0, sizeof(jit_sample));
	call_jit((void (*)(void (*)(void)))page);
	k = ut_find(&jit_sample, 0, "call_jit");
	if (jit_sample.status != CP_UNWIND_COMPLETE || k != 2)
		ut_print(&jit_sample);
	assert_string_equal(ut_frame_sym(&jit_sample.f[0]), "jit_callback");
	assert_true(jit_sample.f[1].pc >= (uintptr_t)page &&
		    jit_sample.f[1].pc < (uintptr_t)page + len);
	assert_int_equal(jit_sample.f[1].how, how);
	assert_int_equal(k, 2);
	assert_int_equal(jit_sample.status, CP_UNWIND_COMPLETE);
	munmap(page, 4096);
}

static void test_fallbacks(void **state)
{
	/* push %rbp; mov %rsp,%rbp; call *%rdi; pop %rbp; ret */
	static const uint8_t with_fp[] = {0x55, 0x48, 0x89, 0xe5, 0xff, 0xd7, 0x5d, 0xc3};
	/* push %rbp; xor %ebp,%ebp; call *%rdi; pop %rbp; ret: no frame pointer to follow */
	static const uint8_t without_fp[] = {0x55, 0x31, 0xed, 0xff, 0xd7, 0x5d, 0xc3};

	(void)state;
	setup_once();
	check_jit(with_fp, sizeof(with_fp), CP_HOW_FP);
	check_jit(without_fp, sizeof(without_fp), CP_HOW_SCAN);
}

/* ---- a makecontext stack (heap memory, not the thread's stack): probed window ---- */
static ucontext_t co_main_ctx, co_ctx;

NOINLINE static void co_entry(void)
{
	here_a(); /* unwinds with cp_unwind_here into here_sample */
	__asm__ volatile("" ::: "memory");
}

static void test_makecontext(void **state)
{
	static const char *const names[] = {"here_b", "here_a", "co_entry"};
	size_t size = 256 * 1024;
	char *stack = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	(void)state;
	setup_once();
	getcontext(&co_ctx);
	co_ctx.uc_stack.ss_sp = stack;
	co_ctx.uc_stack.ss_size = size;
	co_ctx.uc_link = &co_main_ctx;
	makecontext(&co_ctx, co_entry, 0);
	memset(&here_sample, 0, sizeof(here_sample));
	swapcontext(&co_main_ctx, &co_ctx);
	if (!ut_in_order(&here_sample, names, 3))
		ut_print(&here_sample);
	assert_true(ut_in_order(&here_sample, names, 3));
	for (int i = 0; i < here_sample.n; i++) /* every frame found lies on that stack's code */
		assert_true(here_sample.f[i].pc >= 4096);
	fprintf(stderr, "  makecontext stack: %d frames, status %d\n", here_sample.n,
		here_sample.status);
	munmap(stack, size);
}

/* ---- the probed window of a foreign stack stops at a PROT_NONE guard page ---- */
static void test_probe_guard(void **state)
{
	size_t page = 4096;
	char *base = mmap(NULL, 16 * page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct uw_window w;

	(void)state;
	setup_once();
	assert_int_equal(mprotect(base, 8 * page, PROT_READ | PROT_WRITE), 0);
	memset(base, 1, 8 * page);
	/* mapped all along (mincore would say so), but readable only up to 8 pages */
	assert_int_equal(uw_window_for(&w, (uintptr_t)base + 100), 0);
	assert_int_equal(w.hi, (uintptr_t)base + 8 * page);
	assert_int_equal(uw_window_for(&w, (uintptr_t)base + 9 * page), -1);
	munmap(base, 16 * page);
}

/* ---- the shared recipe cache under concurrent unwinds and flushes ---- */
static volatile int conc_stop;
static volatile long conc_bad, conc_done;

NOINLINE static int conc_rec(int depth, struct ut_sample *s)
{
	int r;
	enum cp_unwind_status st;

	if (depth == 0) {
		s->n = cp_unwind_here(s->f, UT_MAX_FRAMES, &st);
		s->status = st;
		return s->n;
	}
	r = conc_rec(depth - 1, s);
	__asm__ volatile("" ::: "memory");
	return r + 1;
}

NOINLINE static void *conc_thread(void *arg)
{
	static struct ut_sample samples[4], refs[4];
	int id = (int)(uintptr_t)arg, depth = 3 + 5 * id;
	struct ut_sample *s = &samples[id], *ref = &refs[id];

	/* The first unwinds (k < 2) check the frames by name; every later one must give
	 * exactly the frames of k == 1, except conc_thread's own return address (the compiler
	 * may duplicate the call site when it peels the loop). */
	for (long k = 0; k < 2 || !conc_stop; k++) {
		struct ut_sample *out = k == 1 ? ref : s;
		conc_rec(depth, out);
		if (k < 2) { /* conc_rec x (depth + 1), conc_thread, start_thread, clone3 */
			if (out->status != CP_UNWIND_COMPLETE || out->n != depth + 4 ||
			    strcmp(ut_frame_sym(&out->f[depth + 1]), "conc_thread")) {
				ut_print(out);
				conc_bad++;
			}
			continue;
		}
		if (s->status != ref->status || s->n != ref->n ||
		    memcmp(s->f, ref->f, sizeof(s->f[0]) * (depth + 1)) ||
		    memcmp(s->f + depth + 2, ref->f + depth + 2, sizeof(s->f[0]) * 2)) {
			if (conc_bad++ == 0) {
				ut_print(ref);
				ut_print(s);
			}
		}
		__atomic_fetch_add(&conc_done, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

static void test_concurrent_cache(void **state)
{
	pthread_t th[4];
	int flushes = 0;

	(void)state;
	setup_once();
	conc_stop = 0;
	conc_bad = conc_done = 0;
	for (int i = 0; i < 4; i++)
		pthread_create(&th[i], NULL, conc_thread, (void *)(uintptr_t)i);
	while (conc_done < 50000) {
		cp_unwind_cache_flush(); /* every thread keeps refilling the table */
		flushes++;
		usleep(200);
	}
	conc_stop = 1;
	for (int i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	fprintf(stderr, "  %ld unwinds in 4 threads, %d cache flushes, %ld wrong\n", conc_done,
		flushes, conc_bad);
	assert_int_equal(conc_bad, 0);
}

/* ---- a stale return-address candidate into a library closed behind the registry's
 * back: validating it must not fault ---- */
static void test_closed_library(void **state)
{
	void *h = dlopen("libz.so.1", RTLD_NOW | RTLD_LOCAL);
	uintptr_t fn, page;
	unsigned char vec;

	(void)state;
	setup_once();
	if (!h) {
		fprintf(stderr, "  cannot load libz: %s\n", dlerror());
		skip();
	}
	fn = (uintptr_t)dlsym(h, "zlibVersion");
	assert_int_equal(cp_modules_sync(), 0);
	assert_non_null(cp_modules_find(fn + 16));
	dlclose(h); /* no sync: the registry still lists the library */
	page = (fn + 16) & ~(uintptr_t)4095;
	if (mincore((void *)page, 4096, &vec) == 0) {
		fprintf(stderr, "  libz stayed mapped after dlclose: nothing to test\n");
		cp_modules_sync();
		skip();
	}
	assert_non_null(cp_modules_find(fn + 16));
	assert_int_equal(uw_is_return_address(fn + 16), 0); /* and no SIGSEGV */
	assert_int_equal(cp_modules_sync(), 0);
	assert_null(cp_modules_find(fn + 16));
}

static void test_no_malloc(void **state)
{
	(void)state;
	/* Runs last: every unwind above ran with ut_in_unwind set. */
	fprintf(stderr, "  %d allocations while unwinding\n", count_malloc_calls);
	assert_int_equal(count_malloc_calls, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_chain),
	    cmocka_unit_test(test_prologue_epilogue),
	    cmocka_unit_test(test_plt),
	    cmocka_unit_test(test_single_step),
	    cmocka_unit_test(test_libc_qsort),
	    cmocka_unit_test(test_nanosleep),
	    cmocka_unit_test(test_here),
	    cmocka_unit_test(test_through_signal),
	    cmocka_unit_test(test_thread),
	    cmocka_unit_test(test_corrupt),
	    cmocka_unit_test(test_fallbacks),
	    cmocka_unit_test(test_makecontext),
	    cmocka_unit_test(test_probe_guard),
	    cmocka_unit_test(test_concurrent_cache),
	    cmocka_unit_test(test_closed_library),
	    cmocka_unit_test(test_no_malloc),
	};
	if (getenv("UT_FILTER")) /* e.g. UT_FILTER=test_chain, for debugging one test */
		cmocka_set_test_filter(getenv("UT_FILTER"));
	return cmocka_run_group_tests(tests, NULL, NULL);
}
