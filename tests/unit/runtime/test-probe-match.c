/* The probe selection the runtime runs inside the measured program (src/patch/select.h)
 * allocates nothing: every function symbol of libstdc++ matched against C and demangled
 * C++ patterns, in a UTF-8 locale (where glibc's fnmatch would convert to wide characters),
 * with malloc interposed and counting. */
#include "patch/select.h"

#include <locale.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

static volatile int counting;
#define COUNT_MALLOC_WHEN counting
#include "count-malloc.h"

static void test_selection_allocates_nothing(void **state)
{
	static const char *const patterns[] = {
	    "std::*",	     "libstdc++*:std::basic_string*::size*",
	    "*::_M_*<*>*",   "-__gnu_cxx::*",
	    "+[[:alpha:]]*", "operator new*",
	};
	static struct cp_patch_name name;
	struct cp_patch_elf e;
	struct cp_patch_elf_iter it;
	struct cp_patch_func fn;
	const char *lib = "/usr/lib/x86_64-linux-gnu/libstdc++.so.6";
	size_t matched = 0, demangled = 0, checked = 0;
	if (!setlocale(LC_ALL, "C.UTF-8"))
		skip();
	counting = 1;
	if (cp_patch_elf_map(&e, lib)) {
		counting = 0;
		skip();
	}
	cp_patch_elf_iter_init(&it);
	while (cp_patch_elf_next(&e, &it, &fn)) {
		cp_patch_name_init(&name, fn.name);
		for (size_t i = 0; i < sizeof patterns / sizeof patterns[0]; i++)
			matched += cp_patch_pattern_match(patterns[i], lib, &name) != 0;
		demangled += cp_patch_name_demangled(&name) != NULL;
		checked += !cp_patch_check_file(&e, &fn);
	}
	cp_patch_elf_unmap(&e);
	counting = 0;
	setlocale(LC_ALL, "C");
	assert_int_equal(count_malloc_calls, 0);
	assert_true(matched > 1000);
	assert_true(demangled > 1000);
	assert_true(checked > 1000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_selection_allocates_nothing),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
