/* The ranking of the search's bottlenecks (output.c, docs/cmd-search.md "Output"): the
 * strongest most precise node of each hypothesis first, then the other most precise
 * nodes, then the rest; a thread's node is not most precise when its code focus has a
 * true refinement; MemoryBound at a focus refines CPUBound at the same focus. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "search/search.h"

#include <string.h>

/* main calls work outside loops; work has two loops. */
static uint32_t f_main, f_work, l_a, l_b;

static void build(struct cp_search *s)
{
	memset(s, 0, sizeof *s);
	cp_code_model_init(&s->model);
	cp_search_graph_init(&s->graph);
	f_main = cp_code_model_func(&s->model, "main");
	f_work = 1;
	cp_code_model_call(&s->model, f_main, f_work, -1);
	assert_int_equal(cp_code_model_func(&s->model, "work"), f_work);
	l_a = cp_code_model_loop(&s->model, f_work, -1, 0x1100);
	l_b = cp_code_model_loop(&s->model, f_work, -1, 0x1200);
}

static uint32_t node(struct cp_search *s, int hyp, int kind, uint32_t target, int32_t parent,
		     double value)
{
	uint32_t i = cp_search_node_get(&s->graph, (uint32_t)hyp, kind, target, parent);
	s->graph.nodes[i].state = CP_NODE_TRUE;
	s->graph.nodes[i].value = value;
	return i;
}

static void test_rank(void **state)
{
	struct cp_search s;
	uint32_t out[16];
	(void)state;
	build(&s);
	uint32_t cpu_main = node(&s, CP_HYP_CPU, CP_FOCUS_FUNC, f_main, -1, 0.95);
	uint32_t cpu_work = node(&s, CP_HYP_CPU, CP_FOCUS_FUNC, f_work, (int32_t)cpu_main, 0.9);
	uint32_t cpu_a = node(&s, CP_HYP_CPU, CP_FOCUS_LOOP, l_a, (int32_t)cpu_work, 0.6);
	uint32_t cpu_b = node(&s, CP_HYP_CPU, CP_FOCUS_LOOP, l_b, (int32_t)cpu_work, 0.5);
	uint32_t sync_main = node(&s, CP_HYP_SYNC, CP_FOCUS_FUNC, f_main, -1, 0.3);
	/* main on thread 0: its code focus is refined (work), so it is not most precise */
	uint32_t main_t0 = cp_search_node_thread(&s.graph, cpu_main, 0);
	s.graph.nodes[main_t0].state = CP_NODE_TRUE;
	s.graph.nodes[main_t0].value = 0.94;
	size_t n = cp_search_bottlenecks(&s, out, 16);
	assert_int_equal(n, 6);
	assert_int_equal(out[0], cpu_a);     /* CPUBound's strongest most precise */
	assert_int_equal(out[1], sync_main); /* ExcessiveSyncWaiting's, before CPUBound's 2nd */
	assert_int_equal(out[2], cpu_b);
	assert_int_equal(out[3], cpu_main); /* the refined ones, by value */
	assert_int_equal(out[4], main_t0);
	assert_int_equal(out[5], cpu_work);
	/* MemoryBound on loop a: CPUBound there is refined by it */
	uint32_t mem_a = node(&s, CP_HYP_MEM, CP_FOCUS_LOOP, l_a, -1, 0.25);
	n = cp_search_bottlenecks(&s, out, 16);
	assert_int_equal(n, 7);
	assert_int_equal(out[0], cpu_b);
	assert_int_equal(out[1], sync_main);
	assert_int_equal(out[2], mem_a);
	cp_search_graph_release(&s.graph);
	cp_code_model_release(&s.model);
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(test_rank)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
