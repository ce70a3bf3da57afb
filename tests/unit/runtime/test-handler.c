/* The sample handler end to end in process, with a scripted sample source plugged into the
 * metric table: claimed deliveries become CCT paths with the source's weight; re-entrant
 * ones are dropped and counted; the program's own deliveries of our signal reach the
 * program's handler (installed through the interposed sigaction); strays that look like
 * ours are swallowed, never passed to SIG_DFL. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "runtime/core/runtime.h"
#include "runtime/unwind/modules.h"
#include "runtime/unwind/unwind.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define FAKE_VALUE 0x5a5a
#define FAKE_WEIGHT 7

extern const struct cp_modules_listener cp_proc_module_listener;

static int fake_start(struct cp_metric *m, struct cp_source_thread *st, pid_t tid)
{
	return 0;
}

static void fake_stop(struct cp_metric *m, struct cp_source_thread *st)
{
}

static int fake_claims(struct cp_metric *m, struct cp_source_thread *st, const siginfo_t *si,
		       uint64_t *weight)
{
	if (si->si_code != SI_QUEUE || si->si_value.sival_int != FAKE_VALUE)
		return 0;
	*weight = FAKE_WEIGHT;
	return 1;
}

static const struct cp_sample_source fake_source = {
    .name = "fake",
    .unit = "ns",
    .source = CP_MF_SRC_CPUTIME,
    .thread_start = fake_start,
    .thread_stop = fake_stop,
    .claims = fake_claims,
};

static char dir[] = "/tmp/cp-test-handler.XXXXXX";
static volatile int app_calls;

static void send_self(int code, int value)
{
	siginfo_t si;
	memset(&si, 0, sizeof si);
	si.si_signo = cp_rt.signo;
	si.si_code = code;
	si.si_pid = getpid();
	si.si_value.sival_int = value;
	/* Delivered to this thread before the system call returns. */
	syscall(SYS_rt_tgsigqueueinfo, getpid(), (pid_t)syscall(SYS_gettid), cp_rt.signo, &si);
}

__attribute__((noinline)) void sampled_leaf(int n)
{
	for (int i = 0; i < n; i++)
		send_self(SI_QUEUE, FAKE_VALUE);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void sampled_caller(int n)
{
	sampled_leaf(n);
	__asm__ volatile("" ::: "memory");
}

/* Stands for a wrapper of the runtime (test_runtime_frames_left_out makes its bytes the
 * runtime's text). */
__attribute__((noinline)) void fake_wrapper(int n)
{
	sampled_leaf(n);
	__asm__ volatile("" ::: "memory");
}

static int setup(void **state)
{
	if (!mkdtemp(dir))
		return -1;
	strcpy(cp_rt.outdir, dir);
	cp_rt.signo = SIGRTMIN + CP_DEFAULT_SIGNAL_OFFSET;
	cp_rt.nmetrics = 1;
	cp_rt.metrics[0].src = &fake_source;
	cp_rt.metrics[0].period = FAKE_WEIGHT;
	cp_rt.pid = getpid();
	if (cp_proc_create() || cp_modules_init(&cp_proc_module_listener) || cp_modules_sync() ||
	    cp_unwind_init())
		return -1;
	cp_rt.active = cp_rt.enabled = 1;
	if (cp_signal_install() || !cp_thread_begin(0))
		return -1;
	return 0;
}

static int teardown(void **state)
{
	char cmd[300];
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	return system(cmd);
}

/* Is some CALL node's return address inside fn (module offset within 128 bytes)? */
static int has_call_into(void (*fn)(int))
{
	const struct cp_module *m = cp_modules_find((uintptr_t)fn);
	struct cp_cct *c = &cp_self->cct;
	if (!m)
		return 0;
	uint64_t lo = (uintptr_t)fn - m->bias;
	for (uint32_t i = 1; i < c->nnodes; i++) {
		struct cp_mf_node *n = cp_cct_node(c, i);
		if (n->kind == CP_MF_NODE_CALL && n->module == m->id && n->offset > lo &&
		    n->offset <= lo + 128)
			return 1;
	}
	return 0;
}

static volatile int nrounds = 2; /* unknown trip count: the loop keeps ONE call site */

static void test_claimed_samples_land_in_cct(void **state)
{
	struct cp_mf_thread *h = cp_self->cct.hdr;
	uint32_t nodes[2];
	uint64_t samples[2];
	for (int round = 0; round < nrounds; round++) {
		sampled_caller(round ? 20 : 50);
		nodes[round] = cp_self->cct.nnodes;
		samples[round] = h->samples[0];
	}
	/* The same context again: values grow, nodes do not. */
	assert_int_equal(samples[0], 50);
	assert_int_equal(samples[1], 70);
	assert_int_equal(nodes[1], nodes[0]);
	uint64_t sum = 0;
	for (uint32_t i = 0; i < cp_self->cct.nnodes; i++)
		sum += cp_cct_node(&cp_self->cct, i)->metrics[0];
	assert_int_equal(sum, 70 * FAKE_WEIGHT);
	assert_int_equal(h->unwind_complete + h->unwind_partial + h->unwind_failed, 70);
	assert_true(h->unwind_complete >= 69);
	assert_true(has_call_into(sampled_leaf));
	assert_true(has_call_into(sampled_caller));
}

static void test_reentrant_sample_dropped(void **state)
{
	struct cp_mf_thread *h = cp_self->cct.hdr;
	uint64_t samples = h->samples[0], dropped = h->dropped;
	cp_self->busy = 1;
	sampled_caller(3);
	cp_self->busy = 0;
	assert_int_equal(h->samples[0], samples);
	assert_int_equal(h->dropped, dropped + 3);
	cp_rt.enabled = 0; /* callpath_stop() / disabled runtime: dropped too */
	sampled_caller(2);
	cp_rt.enabled = 1;
	assert_int_equal(h->dropped, dropped + 5);
}

static void app_handler(int sig)
{
	app_calls++;
}

static void test_program_handler_chained(void **state)
{
	struct sigaction sa, old;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = app_handler;
	assert_int_equal(sigaction(cp_rt.signo, &sa, &old), 0); /* the interposed one */
	assert_true(old.sa_handler == SIG_DFL);
	uint64_t samples = cp_self->cct.hdr->samples[0];
	send_self(SI_QUEUE, 1);		 /* the program's own use of the signal */
	send_self(SI_QUEUE, FAKE_VALUE); /* a sample: not given to the program */
	assert_int_equal(app_calls, 1);
	assert_int_equal(cp_self->cct.hdr->samples[0], samples + 1);
	assert_int_equal(cp_self->foreign_signals, 1);
	send_self(POLL_IN, 0); /* stray, looks like a perf overflow: swallowed */
	assert_int_equal(app_calls, 1);
	assert_int_equal(sigaction(cp_rt.signo, NULL, &old), 0);
	assert_true(old.sa_handler == app_handler);
	/* The program "uninstalling" to SIG_DFL must not let its deliveries kill us. */
	sa.sa_handler = SIG_DFL;
	sigaction(cp_rt.signo, &sa, NULL);
	send_self(SI_QUEUE, 2);
	assert_int_equal(app_calls, 1);
	sampled_caller(1);
	assert_int_equal(cp_self->cct.hdr->samples[0], samples + 2);
}

static void test_mask_keeps_our_signal(void **state)
{
	sigset_t set, now;
	sigemptyset(&set);
	sigaddset(&set, cp_rt.signo);
	assert_int_equal(sigprocmask(SIG_BLOCK, &set, NULL), 0);
	sigprocmask(SIG_SETMASK, NULL, &now);
	assert_int_equal(sigismember(&now, cp_rt.signo), 1); /* what the program asked */
	uint64_t samples = cp_self->cct.hdr->samples[0];
	sampled_caller(1); /* ...but samples still arrive */
	assert_int_equal(cp_self->cct.hdr->samples[0], samples + 1);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	sigprocmask(SIG_SETMASK, NULL, &now);
	assert_int_equal(sigismember(&now, cp_rt.signo), 0);
}

/* The node of path f[0..n) (leaf first), through a fresh path cache. */
static struct cp_mf_node *insert_path(const struct cp_frame *f, int n)
{
	static struct cp_path_cache cache;
	memset(&cache, 0, sizeof cache);
	uint32_t leaf = cp_path_insert(cp_self, &cache, f, n, CP_UNWIND_COMPLETE);
	assert_int_not_equal(leaf, CP_CCT_NONE);
	return cp_cct_node(&cp_self->cct, leaf);
}

static void assert_node_at(const struct cp_mf_node *node, int kind, uintptr_t pc)
{
	const struct cp_module *m = cp_modules_find(pc);
	assert_non_null(m);
	assert_int_equal(node->kind, kind);
	assert_int_equal(node->module, m->id);
	assert_int_equal(node->offset, pc - m->bias);
}

/* A sample whose pc is in a wrapper of the runtime lands on the program's call to the
 * wrapper; a sample in a function the wrapper called (libc) hangs under that call, with
 * no frame of the wrapper; CALLPATH_SHOW_RUNTIME=1 keeps the wrapper's frames. */
static void test_runtime_frames_left_out(void **state)
{
	uintptr_t lo = cp_rt.self_lo, len = cp_rt.self_len;
	uintptr_t wrapper = (uintptr_t)fake_wrapper, caller = (uintptr_t)sampled_caller + 8;
	uintptr_t outer = (uintptr_t)test_runtime_frames_left_out + 16;
	cp_rt.self_lo = wrapper;
	cp_rt.self_len = 32;
	struct cp_frame in_wrapper[3] = {{wrapper + 4, CP_FRAME_PC, 0},
					 {caller, CP_FRAME_RETURN, 0},
					 {outer, CP_FRAME_RETURN, 0}};
	struct cp_frame below[4] = {{(uintptr_t)sampled_leaf + 4, CP_FRAME_PC, 0},
				    {wrapper + 8, CP_FRAME_RETURN, 0},
				    {caller, CP_FRAME_RETURN, 0},
				    {outer, CP_FRAME_RETURN, 0}};
	assert_node_at(insert_path(in_wrapper, 3), CP_MF_NODE_CALL, caller);
	struct cp_mf_node *leaf = insert_path(below, 4);
	assert_node_at(leaf, CP_MF_NODE_PC, (uintptr_t)sampled_leaf + 4);
	assert_node_at(cp_cct_node(&cp_self->cct, leaf->parent), CP_MF_NODE_CALL, caller);

	cp_rt.show_runtime = 1;
	leaf = insert_path(in_wrapper, 3);
	assert_node_at(leaf, CP_MF_NODE_PC, wrapper + 4);
	assert_node_at(cp_cct_node(&cp_self->cct, leaf->parent), CP_MF_NODE_CALL, caller);
	leaf = insert_path(below, 4);
	assert_node_at(cp_cct_node(&cp_self->cct, leaf->parent), CP_MF_NODE_CALL, wrapper + 8);
	cp_rt.show_runtime = 0;
	cp_rt.self_lo = lo;
	cp_rt.self_len = len;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_claimed_samples_land_in_cct),
	    cmocka_unit_test(test_reentrant_sample_dropped),
	    cmocka_unit_test(test_program_handler_chained),
	    cmocka_unit_test(test_mask_keeps_our_signal),
	    cmocka_unit_test(test_runtime_frames_left_out),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
