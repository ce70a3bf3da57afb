/* The choice of the process image to search (procs.c, docs/cmd-search.md "Processes"):
 * the live image with a control channel holding the most of the hypotheses' metrics
 * since the earlier reading (all of it for an image that reading lacks), ties to the
 * newest; ended images are never chosen and images without a channel only count in the
 * share. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "search/procs.h"
#include "search/search.h"

#include <string.h>

static struct cp_search_proc procs_a[4], procs_b[4];

static void set(struct cp_search_proc *p, int pid, unsigned gen, int live, int control, double cpu,
		double wait)
{
	memset(p, 0, sizeof *p);
	p->pid = pid;
	p->gen = gen;
	p->live = live;
	p->control = control;
	p->value[CP_SM_CPU] = cpu;
	p->value[CP_SM_WAIT] = wait;
}

/* a: the shell (its start-up CPU time) and an image that ended by exec; b: the same
 * shell, that ended image, its new image and a worker that started since a. */
static void readings(struct cp_search_procs *a, struct cp_search_procs *b)
{
	set(&procs_a[0], 100, 0, 1, 1, 2e6, 0);
	set(&procs_a[1], 101, 0, 1, 1, 9e9, 0);
	set(&procs_b[0], 100, 0, 1, 1, 2e6, 0);	  /* shell: nothing since a */
	set(&procs_b[1], 101, 0, 0, 1, 9e9, 0);	  /* ended (exec) */
	set(&procs_b[2], 101, 1, 1, 1, 1e8, 0);	  /* its new image: 0.1 s of CPU */
	set(&procs_b[3], 102, 0, 1, 1, 3e8, 5e8); /* a worker: 0.3 s CPU, 0.5 s of waits */
	*a = (struct cp_search_procs){procs_a, 2, 1.0};
	*b = (struct cp_search_procs){procs_b, 4, 1.5};
}

static void test_busiest(void **state)
{
	(void)state;
	struct cp_search_procs a, b;
	double score, share;
	readings(&a, &b);
	unsigned cpu = 1u << CP_HYP_CPU, sync = 1u << CP_HYP_SYNC;
	assert_int_equal(cp_search_procs_busiest(&a, &b, cpu, &score, &share), 3);
	assert_true(score == 3e8);
	assert_true(share == 3e8 / 4e8);
	assert_true(cp_search_procs_score(&a, &b, 0, cpu) == 0);
	/* the waits count for ExcessiveSyncWaiting only */
	assert_true(cp_search_procs_score(&a, &b, 3, cpu | sync) == 8e8);
	/* without its control channel the worker is not chosen, but its time counts */
	procs_b[3].control = 0;
	assert_int_equal(cp_search_procs_busiest(&a, &b, cpu, &score, &share), 2);
	assert_true(share == 1e8 / 4e8);
}

static void test_ties_and_nothing(void **state)
{
	(void)state;
	struct cp_search_procs a, b;
	double score, share;
	readings(&a, &b);
	procs_b[2].value[CP_SM_CPU] = 3e8; /* as busy as the worker: the newer one */
	assert_int_equal(cp_search_procs_busiest(&a, &b, 1u << CP_HYP_CPU, &score, &share), 3);
	/* nothing sampled since a: the newest live image, score and share 0 */
	readings(&a, &b);
	procs_b[2].value[CP_SM_CPU] = 0;
	procs_b[3].value[CP_SM_CPU] = 0;
	assert_int_equal(cp_search_procs_busiest(&a, &b, 1u << CP_HYP_CPU, &score, &share), 3);
	assert_true(score == 0 && share == 0);
	/* no live image with a channel: none */
	procs_b[0].live = procs_b[2].live = procs_b[3].live = 0;
	assert_int_equal(cp_search_procs_busiest(&a, &b, 1u << CP_HYP_CPU, &score, &share), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_busiest),
	    cmocka_unit_test(test_ties_and_nothing),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
