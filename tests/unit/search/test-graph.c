/* The search history graph: the loop-aware refinement rule of the paper's §5, pruning,
 * one node per (hypothesis, focus), the cost limit and Deep Start ordering. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "search/graph.h"

#include <stdlib.h>
#include <string.h>

/* main: calls init and report outside loops; loop L0 calls solve and holds loop L1, which
 * calls kernel. solve calls report too (a second path to the same focus). */
static struct cp_code_model model;
static uint32_t f_main, f_init, f_solve, f_kernel, f_report, l0, l1;

static void build(void)
{
	cp_code_model_init(&model);
	f_main = cp_code_model_func(&model, "main");
	f_init = 1, f_solve = 2, f_kernel = 3, f_report = 4;
	l0 = cp_code_model_loop(&model, f_main, -1, 0x1100);
	l1 = cp_code_model_loop(&model, f_main, (int32_t)l0, 0x1140);
	cp_code_model_call(&model, f_main, f_init, -1);
	cp_code_model_call(&model, f_main, f_solve, (int32_t)l0);
	cp_code_model_call(&model, f_main, f_kernel, (int32_t)l1);
	cp_code_model_call(&model, f_main, f_report, -1);
	assert_int_equal(cp_code_model_func(&model, "init"), f_init);
	assert_int_equal(cp_code_model_func(&model, "solve"), f_solve);
	cp_code_model_call(&model, f_solve, f_report, -1);
	assert_int_equal(cp_code_model_func(&model, "kernel"), f_kernel);
	assert_int_equal(cp_code_model_func(&model, "report"), f_report);
}

static int has(const struct cp_search_graph *g, int kind, uint32_t target)
{
	for (size_t i = 0; i < g->n; i++)
		if (g->nodes[i].kind == kind && g->nodes[i].target == target)
			return (int)i;
	return -1;
}

static void test_refine(void **state)
{
	struct cp_search_graph g;
	(void)state;
	build();
	cp_search_graph_init(&g);
	uint32_t root = cp_search_node_get(&g, 0, CP_FOCUS_FUNC, f_main, -1);
	/* A true function: callees outside loops and its outermost loops, nothing deeper. */
	assert_int_equal(cp_search_decide(&g, &model, root, 1, 0.9, 1.0), 3);
	assert_true(has(&g, CP_FOCUS_FUNC, f_init) >= 0);
	assert_true(has(&g, CP_FOCUS_FUNC, f_report) >= 0);
	int n_l0 = has(&g, CP_FOCUS_LOOP, l0);
	assert_true(n_l0 >= 0);
	assert_int_equal(has(&g, CP_FOCUS_FUNC, f_solve), -1);
	assert_int_equal(has(&g, CP_FOCUS_LOOP, l1), -1);
	/* A true loop: the functions called directly in it and its directly nested loops. */
	assert_int_equal(cp_search_decide(&g, &model, (uint32_t)n_l0, 1, 0.8, 2.0), 2);
	int n_solve = has(&g, CP_FOCUS_FUNC, f_solve), n_l1 = has(&g, CP_FOCUS_LOOP, l1);
	assert_true(n_solve >= 0 && n_l1 >= 0);
	assert_int_equal(has(&g, CP_FOCUS_FUNC, f_kernel), -1);
	/* A false focus is pruned: kernel (inside L1) never appears. */
	assert_int_equal(cp_search_decide(&g, &model, (uint32_t)n_l1, 0, 0.01, 3.0), 0);
	assert_int_equal(has(&g, CP_FOCUS_FUNC, f_kernel), -1);
	/* report is reached from main and from solve: one node, first parent kept. */
	size_t before = g.n;
	assert_int_equal(cp_search_decide(&g, &model, (uint32_t)n_solve, 1, 0.5, 4.0), 0);
	assert_int_equal(g.n, before);
	assert_int_equal(g.nodes[has(&g, CP_FOCUS_FUNC, f_report)].parent, (int32_t)root);
	cp_search_graph_release(&g);
	cp_code_model_release(&model);
}

/* A second module (a library, dlopen'ed) appended to the model: its functions follow the
 * executable's with their own calls; a call seen on sampled paths (main's loop L0 calls
 * the library's entry through a pointer) refines like a static one; PLT stubs are never
 * foci. */
static void test_library(void **state)
{
	struct cp_search_graph g;
	(void)state;
	build();
	uint32_t f_plt = cp_code_model_func(&model, "dlsym@plt");
	model.funcs[f_plt].plt = 1;
	cp_code_model_call(&model, f_init, f_plt, -1);
	uint32_t lib = cp_code_model_module(&model, "/opt/lib/libk.so");
	uint32_t f_apply = cp_code_model_func(&model, "apply");
	uint32_t f_inner = cp_code_model_func(&model, "inner");
	cp_code_model_call(&model, f_apply, f_inner, -1);
	assert_int_equal(model.funcs[f_apply].module, lib);
	assert_int_equal(model.funcs[f_main].module, 0);
	assert_int_equal(model.modules[lib].first_func, f_apply);
	assert_int_equal(model.modules[lib].nfuncs, 2);
	assert_int_equal(cp_code_model_module_find(&model, "/opt/lib/libk.so"), (long)lib);
	assert_int_equal(cp_code_model_module_find(&model, "/opt/lib/other.so"), -1);
	/* seen once per (caller, callee, loop) */
	assert_int_equal(cp_code_model_seen(&model, f_main, f_apply, (int32_t)l0), 1);
	assert_int_equal(cp_code_model_seen(&model, f_main, f_apply, (int32_t)l0), 0);
	assert_true(cp_code_model_calls_at(&model, f_main, (int32_t)l0, f_apply));
	assert_false(cp_code_model_calls_at(&model, f_main, -1, f_apply));
	assert_true(cp_code_model_calls_at(&model, f_main, (int32_t)l0, f_solve));
	cp_search_graph_init(&g);
	uint32_t root = cp_search_node_get(&g, 0, CP_FOCUS_FUNC, f_main, -1);
	cp_search_decide(&g, &model, root, 1, 0.9, 1.0);
	assert_int_equal(has(&g, CP_FOCUS_FUNC, f_apply), -1); /* not outside the loops */
	int n_l0 = has(&g, CP_FOCUS_LOOP, l0), n_init = has(&g, CP_FOCUS_FUNC, f_init);
	assert_int_equal(cp_search_decide(&g, &model, (uint32_t)n_l0, 1, 0.8, 2.0), 3);
	int n_apply = has(&g, CP_FOCUS_FUNC, f_apply);
	assert_true(n_apply >= 0);
	assert_int_equal(g.nodes[n_apply].parent, n_l0);
	assert_int_equal(cp_search_decide(&g, &model, (uint32_t)n_apply, 1, 0.7, 3.0), 1);
	assert_true(has(&g, CP_FOCUS_FUNC, f_inner) >= 0);
	assert_int_equal(cp_search_decide(&g, &model, (uint32_t)n_init, 1, 0.3, 3.0), 0);
	assert_int_equal(has(&g, CP_FOCUS_FUNC, f_plt), -1);
	cp_search_graph_release(&g);
	cp_code_model_release(&model);
}

/* A call seen on a sampled path to a PLT stub (a sample taken in the stub) makes no focus:
 * the stub is not code of the program's (the call's target is seen from its own samples);
 * a call seen to a real function does. */
static void test_seen_plt(void **state)
{
	struct cp_search_graph g;
	(void)state;
	build();
	uint32_t f_stub = cp_code_model_func(&model, "free@plt");
	model.funcs[f_stub].plt = 1;
	assert_int_equal(cp_code_model_seen(&model, f_init, f_stub, -1), 0);
	assert_int_equal(cp_code_model_seen(&model, f_init, f_kernel, -1), 1);
	cp_search_graph_init(&g);
	uint32_t n = cp_search_node_get(&g, 0, CP_FOCUS_FUNC, f_init, -1);
	cp_search_decide(&g, &model, n, 1, 0.9, 1.0);
	assert_true(has(&g, CP_FOCUS_FUNC, f_kernel) >= 0);
	assert_int_equal(has(&g, CP_FOCUS_FUNC, f_stub), -1);
	cp_search_graph_release(&g);
	cp_code_model_release(&model);
}

static void test_cost_limit(void **state)
{
	struct cp_search_graph g;
	uint32_t out[8];
	(void)state;
	build();
	cp_search_graph_init(&g);
	uint32_t root = cp_search_node_get(&g, 0, CP_FOCUS_FUNC, f_main, -1);
	assert_int_equal(cp_search_next(&g, 0.05, out, 8), 1);
	assert_int_equal(out[0], root);
	assert_int_equal(g.nodes[root].state, CP_NODE_PENDING);
	cp_search_decide(&g, &model, root, 1, 0.9, 1.0); /* init, report, L0 queued */
	g.nodes[has(&g, CP_FOCUS_LOOP, l0)].deep = 1;	 /* the sampling phase pointed there */
	assert_int_equal(cp_search_next(&g, 0.05, out, 1), 1);
	assert_int_equal(out[0], (uint32_t)has(&g, CP_FOCUS_LOOP, l0)); /* deep start first */
	g.nodes[out[0]].cost = 0.06; /* its probes cost 6 % of the time: over a 5 % limit */
	assert_int_equal(cp_search_next(&g, 0.05, out, 8), 0); /* the rest waits, queued */
	assert_int_equal(g.nodes[has(&g, CP_FOCUS_FUNC, f_init)].state, CP_NODE_QUEUED);
	cp_search_decide(&g, &model, (uint32_t)has(&g, CP_FOCUS_LOOP, l0), 0, 0.0, 2.0);
	assert_int_equal(cp_search_next(&g, 0.05, out, 8), 2); /* budget free again */
	cp_search_graph_release(&g);
	cp_code_model_release(&model);
}

static void test_dot(void **state)
{
	struct cp_search_graph g;
	static const char *const hyps[] = {"CPUBound"};
	char *buf = NULL;
	size_t len = 0;
	(void)state;
	build();
	cp_search_graph_init(&g);
	uint32_t root = cp_search_node_get(&g, 0, CP_FOCUS_FUNC, f_main, -1);
	cp_search_decide(&g, &model, root, 1, 0.9, 1.0);
	FILE *f = open_memstream(&buf, &len);
	cp_search_graph_dot(&g, &model, hyps, f);
	fclose(f);
	assert_non_null(strstr(buf, "digraph search {"));
	assert_non_null(strstr(buf, "CPUBound\\nmain\\ntrue 90.0%\" style=bold"));
	assert_non_null(strstr(buf, "loop in main at 0x1100\\nqueued"));
	assert_non_null(strstr(buf, "n0 -> n3;"));
	free(buf);
	cp_search_graph_release(&g);
	cp_code_model_release(&model);
}

/* The Machine refinement: a (hypothesis, code focus, thread) node under the code node, one
 * per thread, never refined along the Code hierarchy, and distinct from the code node. */
static void test_thread(void **state)
{
	struct cp_search_graph g;
	(void)state;
	build();
	cp_search_graph_init(&g);
	uint32_t root = cp_search_node_get(&g, 0, CP_FOCUS_FUNC, f_main, -1);
	cp_search_decide(&g, &model, root, 1, 0.9, 1.0);
	size_t before = g.n;
	uint32_t t1 = cp_search_node_thread(&g, root, 1);
	assert_int_equal(g.n, before + 1);
	assert_int_equal(g.nodes[t1].parent, (int32_t)root);
	assert_int_equal(g.nodes[t1].thread, 1);
	assert_int_equal(g.nodes[t1].target, f_main);
	assert_int_equal(cp_search_node_thread(&g, root, 1), t1);
	assert_int_not_equal(cp_search_node_thread(&g, root, 2), t1);
	assert_int_equal(cp_search_node_get(&g, 0, CP_FOCUS_FUNC, f_main, -1), root);
	assert_int_equal(cp_search_decide(&g, &model, t1, 1, 0.8, 2.0), 0);
	/* loop L0 (queued: its children solve and L1 do not exist yet): its thread node
	 * refines into nothing */
	uint32_t n_l0 = cp_search_node_get(&g, 0, CP_FOCUS_LOOP, l0, -1);
	before = g.n;
	uint32_t ts = cp_search_node_thread(&g, n_l0, 1);
	assert_int_equal(cp_search_decide(&g, &model, ts, 1, 0.5, 3.0), 0);
	assert_int_equal(g.n, before + 1);
	cp_search_graph_release(&g);
	cp_code_model_release(&model);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_refine),     cmocka_unit_test(test_library),
	    cmocka_unit_test(test_cost_limit), cmocka_unit_test(test_dot),
	    cmocka_unit_test(test_thread),     cmocka_unit_test(test_seen_plt),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
