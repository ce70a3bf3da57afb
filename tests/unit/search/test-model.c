/* The search's code model from a real binary (tests/workloads/loops.O2): the loop nest
 * and each call's innermost loop, what the refinement rule walks. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "base/error.h"
#include "search/graph.h"
#include "search/loops.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long func(const struct cp_code_model *m, const char *name)
{
	for (size_t i = 0; i < m->nfuncs; i++)
		if (!strcmp(m->funcs[i].name, name))
			return (long)i;
	return -1;
}

static size_t loops_of(const struct cp_code_model *m, long f, int outermost)
{
	size_t k = 0;
	for (size_t l = 0; l < m->nloops; l++)
		k += m->loops[l].func == (uint32_t)f && (!outermost || m->loops[l].parent < 0);
	return k;
}

/* The innermost loop of f's call to callee (-2: no such call). */
static int32_t call_loop(const struct cp_code_model *m, long f, long callee)
{
	const struct cp_code_func *fn = &m->funcs[f];
	for (uint32_t c = 0; c < fn->ncalls; c++)
		if (m->calls[fn->first_call + c].callee == (uint32_t)callee)
			return m->calls[fn->first_call + c].loop;
	return -2;
}

/* The model of tests/workloads/loops.O2 (its path in path). */
static void load(struct cp_code_model *m, char *path, size_t cap)
{
	const char *build = getenv("CP_BUILD_DIR");
	snprintf(path, cap, "%s/tests/workloads/loops.O2", build ? build : "build");
	cp_code_model_init(m);
	assert_int_equal(cp_code_model_from_module(m, path), 0);
}

static void test_model(void **state)
{
	char path[4096];
	struct cp_code_model m;
	(void)state;
	load(&m, path, sizeof path);
	long nested = func(&m, "nested"), cil = func(&m, "calls_in_loop");
	long callee = func(&m, "callee"), main_ = func(&m, "main"), tiny = func(&m, "tiny");
	assert_true(nested >= 0 && cil >= 0 && callee >= 0 && main_ >= 0 && tiny >= 0);
	assert_int_equal(loops_of(&m, nested, 0), 2); /* an outer loop and the inner one */
	assert_int_equal(loops_of(&m, nested, 1), 1);
	assert_int_equal(loops_of(&m, tiny, 0), 1);
	int32_t l = call_loop(&m, cil, callee);
	assert_true(l >= 0); /* callee is called inside calls_in_loop's loop */
	assert_int_equal(m.loops[l].func, (uint32_t)cil);
	assert_true(call_loop(&m, main_, tiny) >= 0); /* main calls tiny in its loop over ns */
	cp_code_model_release(&m);
}

/* A second module appended (as a library the program loads): its functions, calls and
 * loops follow the first module's, its calls point at its own functions. */
static void test_two_modules(void **state)
{
	char path[4096];
	struct cp_code_model m;
	(void)state;
	load(&m, path, sizeof path);
	size_t nf = m.nfuncs, nl = m.nloops;
	assert_int_equal(cp_code_model_from_module(&m, "/nonexistent/lib.so"), CP_ENOENT);
	cp_error_clear();
	assert_int_equal(m.nmodules, 1);
	assert_int_equal(cp_code_model_from_module(&m, path), 0);
	assert_int_equal(m.nmodules, 2);
	assert_int_equal(m.modules[1].first_func, nf);
	assert_int_equal(m.nfuncs, 2 * nf);
	assert_int_equal(m.nloops, 2 * nl);
	long cil = func(&m, "calls_in_loop"), callee = func(&m, "callee");
	long cil2 = cil + (long)nf, callee2 = callee + (long)nf;
	assert_string_equal(m.funcs[cil2].name, "calls_in_loop");
	assert_int_equal(m.funcs[cil2].module, 1);
	assert_int_equal(call_loop(&m, cil2, callee), -2); /* not into the first module */
	int32_t l = call_loop(&m, cil2, callee2);
	assert_true(l >= (int32_t)nl);
	assert_int_equal(m.loops[l].func, (uint32_t)cil2);
	cp_code_model_release(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(test_model),
					   cmocka_unit_test(test_two_modules)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
