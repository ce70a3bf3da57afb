/* Probe patterns (src/patch/select.c): C and C++ names, mangled and demangled, module
 * parts, roles; the ELF function reader and the refusal rules; and, over every symbol of
 * the real libstdc++, that the shortcut skipping the demangler never loses a match. */
#include "patch/patch.h"
#include "patch/select.h"

#include <fnmatch.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

static struct cp_patch_name nm;

static uint32_t match(const char *pattern, const char *path, const char *symbol)
{
	cp_patch_name_init(&nm, symbol);
	return cp_patch_pattern_match(pattern, path, &nm);
}

/* cp_patch_glob against glibc's fnmatch (C locale) on random patterns and names over an
 * alphabet full of glob syntax, and on fixed cases. */
static void test_glob_like_fnmatch(void **state)
{
	static const char alphabet[] = "ab:*?[]!^-\\";
	static const char *const fixed[][2] = {
	    {"ns::*", "ns::Klass::get"},
	    {"[[:alpha:]]x", "ax"},
	    {"[![:digit:]]", "a"},
	    {"[]a]", "]"},
	    {"[a-c]*", "b::x"},
	    {"\\*", "*"},
	    {"*a*b", "xaxxb"},
	    {"[:a]", ":"},
	    {"a[", "a["},
	    {"*::~*", "A::~A()"},
	    {"?*?", "ab"},
	    {"[^a]", "b"},
	};
	char pat[8], str[8];
	unsigned seed = 12345;
	for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
		if (cp_patch_glob(fixed[i][0], fixed[i][1]) !=
		    !fnmatch(fixed[i][0], fixed[i][1], 0))
			fail_msg("'%s' on '%s'", fixed[i][0], fixed[i][1]);
	for (int t = 0; t < 300000; t++) {
		int np = (int)(rand_r(&seed) % 7), ns = (int)(rand_r(&seed) % 7);
		for (int i = 0; i < np; i++)
			pat[i] = alphabet[rand_r(&seed) % (sizeof alphabet - 1)];
		for (int i = 0; i < ns; i++)
			str[i] = alphabet[rand_r(&seed) % 5];
		pat[np] = str[ns] = 0;
		if (cp_patch_glob(pat, str) != !fnmatch(pat, str, 0))
			fail_msg("'%s' on '%s': %d, fnmatch %d", pat, str, cp_patch_glob(pat, str),
				 !fnmatch(pat, str, 0));
	}
}

static void test_c_names(void **state)
{
	assert_int_equal(match("work", "/bin/app", "work"), CP_PATCH_ROLE_MEASURE);
	assert_int_equal(match("wor", "/bin/app", "work"), 0);
	assert_int_equal(match("MPI_*", "/bin/app", "MPI_Send"), CP_PATCH_ROLE_MEASURE);
	assert_int_equal(match("+solve", "/bin/app", "solve"),
			 CP_PATCH_ROLE_MEASURE | CP_PATCH_ROLE_SELECT);
	assert_int_equal(match("-io_*", "/bin/app", "io_read"),
			 CP_PATCH_ROLE_MEASURE | CP_PATCH_ROLE_FILTER);
	assert_int_equal(match("libc.so*:malloc", "/lib/x86_64-linux-gnu/libc.so.6", "malloc"),
			 CP_PATCH_ROLE_MEASURE);
	assert_int_equal(match("libc.so*:malloc", "/bin/app", "malloc"), 0);
	assert_null(cp_patch_name_demangled(&nm));
}

/* A pattern naming a function matches its GCC clones (as perf shows them), not its .cold
 * part, nor a function whose name merely starts the same. */
static void test_clone_names(void **state)
{
	const uint32_t M = CP_PATCH_ROLE_MEASURE;
	assert_int_equal(match("simulate_step", "/bin/app", "simulate_step.constprop.0"), M);
	assert_int_equal(match("relax", "/bin/app", "relax.isra.0"), M);
	assert_int_equal(match("relax", "/bin/app", "relax.part.12"), M);
	assert_int_equal(match("relax", "/bin/app", "relax.isra.0.constprop.1"), M);
	assert_int_equal(match("rel*", "/bin/app", "relax.constprop.0"), M);
	assert_int_equal(match("app:relax", "/bin/app", "relax.constprop.0"), M);
	assert_int_equal(match("relax.constprop.0", "/bin/app", "relax.constprop.0"), M);
	assert_int_equal(match("relax", "/bin/app", "relax.cold"), 0);
	assert_int_equal(match("relax", "/bin/app", "relax.part.0.cold"), 0);
	assert_int_equal(match("relax", "/bin/app", "relax.constprop"), 0);
	assert_int_equal(match("relax", "/bin/app", "relax.lto_priv.0"), 0);
	assert_int_equal(match("relax", "/bin/app", "relaxed.constprop.0"), 0);
	assert_int_equal(cp_patch_clone_base_len("f.constprop.3"), 1);
	assert_int_equal(cp_patch_clone_base_len("f"), 0);
	assert_int_equal(cp_patch_clone_base_len(".constprop.0"), 0);
}

/* namespace ns { struct Klass { void method(int); int get() const; }; template <class T>
 * T max(T, T); } and a lambda in main, as g++ mangles them. */
static void test_cxx_names(void **state)
{
	const char *method = "_ZN2ns5Klass6methodEi";
	assert_true(match("ns::Klass::method", "/bin/app", method));
	assert_true(match("ns::Klass::method(int)", "/bin/app", method));
	assert_true(match("ns::Klass::*", "/bin/app", method));
	assert_true(match("*::method", "/bin/app", method));
	assert_true(match("_ZN2ns5Klass6method*", "/bin/app", method));
	assert_string_equal(cp_patch_name_demangled(&nm), "ns::Klass::method(int)");
	assert_false(match("method", "/bin/app", method));
	assert_false(match("ns::Klass::method(long)", "/bin/app", method));
	assert_false(match("ns::Other::method", "/bin/app", method));
	assert_true(match("ns::Klass::get() const", "/bin/app", "_ZNK2ns5Klass3getEv"));
	/* A template function: its demangled name has the return type first. */
	const char *max = "_ZN2ns3maxIiEET_S1_S1_";
	assert_true(match("ns::max<int>", "/bin/app", max));
	assert_true(match("ns::max*", "/bin/app", max));
	assert_true(match("ns::max<int>(int, int)", "/bin/app", max));
	assert_true(match("int ns::max<int>(int, int)", "/bin/app", max));
	assert_string_equal(cp_patch_name_demangled(&nm), "int ns::max<int>(int, int)");
	assert_false(match("ns::max<long>", "/bin/app", max));
	/* A free function matches by its plain name, as a C function does. */
	assert_true(match("compute", "/bin/app", "_Z7computei"));
	/* A lambda's call operator, in its enclosing function. */
	const char *lambda = "_ZZ4mainENKUliE_clEi";
	assert_true(match("main::{lambda(int)#1}::operator()", "/bin/app", lambda));
	assert_true(match("main::*", "/bin/app", lambda));
	/* Operators and std names are not spelled out in the mangled name. */
	assert_true(match("ns::Klass::operator()", "/bin/app", "_ZN2ns5KlassclEv"));
	assert_true(match("ns::Klass::oper*", "/bin/app", "_ZN2ns5KlassplERKS0_"));
	assert_true(match("std::string::size", "/bin/app", "_ZNKSs4sizeEv"));
	assert_true(match("*::string::size", "/bin/app", "_ZNKSs4sizeEv"));
	assert_true(match("*str*::size", "/bin/app", "_ZNKSs4sizeEv"));
	assert_true(
	    match("(anonymous namespace)::helper", "/bin/app", "_ZN12_GLOBAL__N_16helperEv"));
}

static void test_module_colon(void **state)
{
	/* '::' is a scope, the first lone ':' ends the module part. */
	const char *lib = "/usr/lib/libfoo.so.1", *method = "_ZN2ns5Klass6methodEi";
	assert_true(match("libfoo.so*:ns::Klass::method", lib, method));
	assert_false(match("libbar.so*:ns::Klass::method", lib, method));
	assert_true(match("ns::Klass::method", lib, method));
	assert_int_equal(match("+libfoo.so*:ns::*", lib, method),
			 CP_PATCH_ROLE_MEASURE | CP_PATCH_ROLE_SELECT);
}

static void test_skipped_modules(void **state)
{
	assert_true(cp_patch_module_skipped("/lib64/ld-linux-x86-64.so.2"));
	assert_true(cp_patch_module_skipped("/opt/callpath/lib/libcallpath-rt.so"));
	assert_true(cp_patch_module_skipped("[vdso]"));
	assert_false(cp_patch_module_skipped("/lib/x86_64-linux-gnu/libc.so.6"));
}

int probe_me(int x);
__attribute__((noinline)) int probe_me(int x)
{
	return x * 3 + (x >> 2) - 7;
}

static void test_elf_functions(void **state)
{
	struct cp_patch_elf e;
	struct cp_patch_elf_iter it;
	struct cp_patch_func fn;
	int found = 0, start = 0;
	assert_int_equal(cp_patch_elf_map(&e, "/proc/self/exe"), 0);
	cp_patch_elf_iter_init(&it);
	while (cp_patch_elf_next(&e, &it, &fn)) {
		if (!strcmp(fn.name, "probe_me")) {
			found++;
			assert_int_equal(cp_patch_check_file(&e, &fn), CP_PATCH_OK);
			assert_string_equal(fn.secname, ".text");
		}
		if (!strcmp(fn.name, "_start")) {
			start++;
			assert_int_equal(cp_patch_check_function(&e, &fn), CP_PATCH_NO_CALLER);
		}
	}
	assert_int_equal(found, 1);
	assert_int_equal(start, 1);
	assert_false(cp_patch_elf_next(&e, &it, &fn));
	cp_patch_elf_unmap(&e);
	assert_int_equal(cp_patch_elf_map(&e, "/nonexistent"), -1);
	assert_int_equal(cp_patch_elf_map(&e, "/proc/self/cmdline"), -1);
	assert_int_equal(probe_me(4), 6);
}

static void test_refusals(void **state)
{
	static uint8_t file[4096];
	Elf64_Shdr text = {.sh_type = SHT_PROGBITS,
			   .sh_flags = SHF_ALLOC | SHF_EXECINSTR,
			   .sh_addr = 0x1000,
			   .sh_offset = 0x100,
			   .sh_size = 0x200};
	Elf64_Sym sym = {
	    .st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC), .st_value = 0x1100, .st_size = 0x40};
	struct cp_patch_elf e = {.f = file, .size = sizeof file};
	struct cp_patch_func fn = {"f", &sym, &text, ".text", 0};
	assert_int_equal(cp_patch_check_function(&e, &fn), CP_PATCH_OK);
	sym.st_size = 0x200; /* runs past its section */
	assert_int_equal(cp_patch_check_function(&e, &fn), CP_PATCH_NOT_EXEC);
	sym.st_size = 0x40;
	text.sh_type = SHT_NOBITS;
	assert_int_equal(cp_patch_check_function(&e, &fn), CP_PATCH_NOT_EXEC);
	text.sh_type = SHT_PROGBITS;
	fn.secname = ".plt.sec";
	assert_int_equal(cp_patch_check_function(&e, &fn), CP_PATCH_PLT);
	fn.secname = ".text";
	fn.name = "__sigsetjmp";
	assert_int_equal(cp_patch_check_function(&e, &fn), CP_PATCH_RETURNS_TWICE);
	fn.name = "f";
	sym.st_info = ELF64_ST_INFO(STB_GLOBAL, STT_GNU_IFUNC);
	assert_int_equal(cp_patch_check_function(&e, &fn), CP_PATCH_IFUNC);
}

/* sub_HEX: exact, lowercase hex, with the module part and +/- as other patterns. */
static void test_unnamed_patterns(void **state)
{
	uint64_t v = 0;
	int q = -1;
	assert_int_equal(cp_patch_pattern_unnamed("sub_5230", "/usr/bin/xz", &v, &q),
			 CP_PATCH_ROLE_MEASURE);
	assert_int_equal(v, 0x5230);
	assert_int_equal(q, 0);
	assert_int_equal(
	    cp_patch_pattern_unnamed("+xz:sub_ffffffffffffffff", "/usr/bin/xz", &v, &q),
	    CP_PATCH_ROLE_MEASURE | CP_PATCH_ROLE_SELECT);
	assert_true(v == UINT64_MAX && q == 1);
	assert_int_equal(cp_patch_pattern_unnamed("x*:sub_1a", "/usr/bin/xz", &v, &q),
			 CP_PATCH_ROLE_MEASURE);
	assert_int_equal(v, 0x1a);
	static const char *const no[] = {
	    "sub_",	     "sub_*",  "sub_52 ",   "sub_5230x", "sub_5G", "sub_1ffffffffffffffff",
	    "lzma:sub_5230", "Sub_52", "sub_5230*", "main"};
	for (size_t i = 0; i < sizeof no / sizeof no[0]; i++)
		assert_int_equal(cp_patch_pattern_unnamed(no[i], "/usr/bin/xz", &v, &q), 0);
}

/* The function without symbol at an address of this test program's .text: refused without
 * an FDE size, checked like a symbol's with one; none where a symbol covers the address. */
static void test_unnamed_function(void **state)
{
	struct cp_patch_elf e;
	struct cp_patch_elf_iter it;
	struct cp_patch_func fn, un;
	Elf64_Sym sym;
	char name[32];
	assert_int_equal(cp_patch_elf_map(&e, "/proc/self/exe"), 0);
	cp_patch_elf_iter_init(&it);
	while (cp_patch_elf_next(&e, &it, &fn) && strcmp(fn.name, "probe_me"))
		;
	assert_string_equal(fn.name, "probe_me");
	uint64_t at = fn.sym->st_value, size = fn.sym->st_size;
	assert_int_equal(cp_patch_elf_unnamed(&e, at, size, name, &sym, &un), -1);
	assert_int_equal(cp_patch_elf_unnamed(&e, at + 1, size, name, &sym, &un), -1);
	/* a file whose symbols are gone: the first section is the null one */
	struct cp_patch_elf stripped = e;
	Elf64_Shdr sh[64];
	assert_true(e.nsec <= 64);
	memcpy(sh, e.sh, e.nsec * sizeof *sh);
	for (unsigned i = 0; i < e.nsec; i++)
		if (sh[i].sh_type == SHT_SYMTAB || sh[i].sh_type == SHT_DYNSYM)
			sh[i].sh_type = SHT_NULL;
	stripped.sh = sh;
	assert_int_equal(cp_patch_elf_unnamed(&stripped, at, 0, name, &sym, &un), 0);
	assert_true(un.unnamed && un.sym == &sym && sym.st_value == at);
	char want[32];
	snprintf(want, sizeof want, "sub_%llx", (unsigned long long)at);
	assert_string_equal(un.name, want);
	assert_int_equal(cp_patch_check_function(&stripped, &un), CP_PATCH_NO_FDE);
	sym.st_size = size;
	assert_int_equal(cp_patch_check_file(&stripped, &un), cp_patch_check_file(&e, &fn));
	sym.st_value = ((const Elf64_Ehdr *)(const void *)e.f)->e_entry;
	assert_int_equal(cp_patch_check_function(&stripped, &un), CP_PATCH_NO_CALLER);
	assert_int_equal(cp_patch_elf_unnamed(&stripped, 0, 16, name, &sym, &un), -1);
	cp_patch_elf_unmap(&e);
}

static int glob_any(const char *glob, struct cp_patch_name *n)
{
	if (!fnmatch(glob, n->symbol, 0))
		return 1;
	if (!cp_patch_name_demangled(n))
		return 0;
	return !fnmatch(glob, n->full, 0) || !fnmatch(glob, n->noret, 0) ||
	       !fnmatch(glob, n->bare, 0);
}

/* Over every function symbol of libstdc++: the match equals fnmatch over all the forms
 * (no shortcut), for patterns built from the symbols' own demangled names. */
static void test_no_lost_match(void **state)
{
	static const char *const patterns[] = {
	    "std::*",	       "*::basic_string*", "std::string::*",  "*::size*",
	    "*operator*",      "__gnu_cxx::*",	   "*::_M_*",	      "*::locale::*",
	    "*::sputn*",       "*codecvt*::do_*",  "*::~*",	      "*::operator=*",
	    "void *::_M_*(*)", "*::_M_*<*>*",	   "*ctype<char>::*", "*codecvt<wchar_t*",
	    "*str*",	       "*alloc*",
	};
	size_t hits[sizeof patterns / sizeof patterns[0]] = {0};
	static struct cp_patch_name ref;
	struct cp_patch_elf e;
	struct cp_patch_elf_iter it;
	struct cp_patch_func fn;
	const char *lib = getenv("CP_TEST_LIBSTDCXX");
	if (!lib)
		lib = "/usr/lib/x86_64-linux-gnu/libstdc++.so.6";
	if (cp_patch_elf_map(&e, lib))
		skip();
	size_t checked = 0, matched = 0;
	cp_patch_elf_iter_init(&it);
	while (cp_patch_elf_next(&e, &it, &fn)) {
		for (size_t i = 0; i < sizeof patterns / sizeof patterns[0]; i++) {
			cp_patch_name_init(&ref, fn.name);
			int want = glob_any(patterns[i], &ref);
			int got = match(patterns[i], lib, fn.name) != 0;
			if (want != got)
				fail_msg("%s on %s (%s): %d, expected %d", patterns[i], fn.name,
					 ref.full, got, want);
			matched += got;
			hits[i] += got;
		}
		checked++;
	}
	cp_patch_elf_unmap(&e);
	assert_true(checked > 1000);
	assert_true(matched > 1000);
	for (size_t i = 0; i < sizeof patterns / sizeof patterns[0]; i++)
		if (!hits[i])
			fail_msg("%s matches nothing in %s", patterns[i], lib);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_glob_like_fnmatch), cmocka_unit_test(test_c_names),
	    cmocka_unit_test(test_cxx_names),	      cmocka_unit_test(test_clone_names),
	    cmocka_unit_test(test_module_colon),      cmocka_unit_test(test_skipped_modules),
	    cmocka_unit_test(test_elf_functions),     cmocka_unit_test(test_refusals),
	    cmocka_unit_test(test_no_lost_match),     cmocka_unit_test(test_unnamed_patterns),
	    cmocka_unit_test(test_unnamed_function),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
