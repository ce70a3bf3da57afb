/* The load-module registry: what it finds (executable, libc, vDSO), build-ids checked
 * against readelf, dlopen/dlclose epochs (ids never reused, unloaded slots marked), and
 * lock-free lookups racing with syncs. */
#include <dlfcn.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <cmocka.h>

#include "runtime/unwind/cfi.h"
#include "runtime/unwind/modules.h"

/* A library this test does not link; loaded and unloaded by the epoch tests. */
static const char *const dl_candidates[] = {"libz.so.1", "libbz2.so.1", "liblzma.so.5",
					    "libzstd.so.1"};

struct seen {
	int loaded, unloaded;
	uint32_t last_loaded_id, last_unloaded_id;
	uint64_t last_load_seq, last_unload_seq;
	char last_path[CP_MODULE_PATH_MAX];
};

static struct seen seen;

static void on_loaded(const struct cp_module *m, void *arg)
{
	struct seen *s = arg;
	s->loaded++;
	s->last_loaded_id = m->id;
	s->last_load_seq = m->load_seq;
	strcpy(s->last_path, m->path);
}

static void on_unloaded(const struct cp_module *m, void *arg)
{
	struct seen *s = arg;
	s->unloaded++;
	s->last_unloaded_id = m->id;
	s->last_unload_seq = m->unload_seq;
}

static int setup(void **state)
{
	static const struct cp_modules_listener l = {on_loaded, on_unloaded, &seen};
	static int done;

	(void)state;
	if (!done) {
		assert_int_equal(cp_modules_init(&l), 0);
		done = 1;
	}
	return 0;
}

/* Build-id of path as printed by readelf -n, in hex. */
static int readelf_build_id(const char *path, char *hex, size_t len)
{
	char cmd[1024], line[512];
	FILE *p;
	int found = 0;

	snprintf(cmd, sizeof(cmd), "readelf -n '%s' 2>/dev/null", path);
	p = popen(cmd, "r");
	if (!p)
		return 0;
	while (fgets(line, sizeof(line), p)) {
		char *at = strstr(line, "Build ID: ");
		if (at && !found) {
			snprintf(hex, len, "%s", at + 10);
			hex[strcspn(hex, "\n ")] = '\0';
			found = 1;
		}
	}
	pclose(p);
	return found;
}

static void check_build_id(const struct cp_module *m)
{
	char want[128], got[128];

	if (!readelf_build_id(m->path, want, sizeof(want)))
		skip();
	for (uint32_t i = 0; i < m->build_id_len; i++)
		sprintf(got + 2 * i, "%02x", m->build_id[i]);
	got[2 * m->build_id_len] = '\0';
	assert_string_equal(got, want);
}

static void test_find_basic(void **state)
{
	const struct cp_module *exe = cp_modules_find((uintptr_t)test_find_basic);
	const struct cp_module *libc = cp_modules_find((uintptr_t)dlsym(RTLD_DEFAULT, "qsort"));
	const struct cp_module *vdso;
	uintptr_t on_stack = 0;

	(void)state;
	assert_non_null(exe);
	assert_non_null(libc);
	assert_ptr_not_equal(exe, libc);
	assert_non_null(strstr(exe->path, "test-modules"));
	assert_non_null(strstr(libc->path, "libc.so"));
	assert_true(exe->text_lo <= (uintptr_t)test_find_basic &&
		    (uintptr_t)test_find_basic < exe->text_hi);
	assert_non_null(exe->eh_frame_hdr);
	assert_non_null(libc->eh_frame_hdr);
	assert_int_equal(exe->unloaded, 0);
	check_build_id(exe);
	check_build_id(libc);
	assert_null(cp_modules_find(0));
	assert_null(cp_modules_find(0x1000));
	assert_null(cp_modules_find((uintptr_t)&seen));	    /* data, not text */
	assert_null(cp_modules_find((uintptr_t)&on_stack)); /* the stack */
	/* The vDSO: its text lies in the image the kernel maps at AT_SYSINFO_EHDR. */
	vdso = NULL;
	for (uintptr_t a = getauxval(AT_SYSINFO_EHDR);
	     a && !vdso && a < getauxval(AT_SYSINFO_EHDR) + 0x4000; a += 16)
		vdso = cp_modules_find(a);
	assert_non_null(vdso);
	assert_string_equal(vdso->path, "[vdso]");
	assert_true(vdso->build_id_len > 0);
}

/* A function of the library loaded as `name`. */
static uintptr_t dl_function(void *h, const char *name)
{
	if (strstr(name, "libz."))
		return (uintptr_t)dlsym(h, "zlibVersion");
	if (strstr(name, "bz2"))
		return (uintptr_t)dlsym(h, "BZ2_bzlibVersion");
	if (strstr(name, "lzma"))
		return (uintptr_t)dlsym(h, "lzma_version_string");
	return (uintptr_t)dlsym(h, "ZSTD_versionNumber");
}

static void test_dlopen_epochs(void **state)
{
	void *h = NULL;
	const char *name = NULL;
	uintptr_t fn;
	const struct cp_module *m, *m2;
	uint32_t id1;
	uint64_t load1, unload1;
	int loaded0 = seen.loaded, unloaded0 = seen.unloaded;

	(void)state;
	for (size_t i = 0; i < sizeof(dl_candidates) / sizeof(dl_candidates[0]) && !h; i++)
		if ((h = dlopen(dl_candidates[i], RTLD_NOW | RTLD_LOCAL)))
			name = dl_candidates[i];
	if (!h)
		skip();
	fn = dl_function(h, name);
	assert_true(fn != 0);
	assert_null(cp_modules_find(fn)); /* not synced yet */
	assert_int_equal(cp_modules_sync(), 0);
	m = cp_modules_find(fn);
	assert_non_null(m);
	assert_non_null(strstr(m->path, name));
	assert_int_equal(seen.loaded, loaded0 + 1);
	assert_int_equal(seen.last_loaded_id, m->id);
	id1 = m->id;
	load1 = seen.last_load_seq;
	assert_true(load1 > 0);
	assert_int_equal(m->unload_seq, 0);
	assert_int_equal(cp_modules_sync(), 0); /* nothing changed: no new announcements */
	assert_int_equal(seen.loaded, loaded0 + 1);

	dlclose(h);
	assert_int_equal(cp_modules_sync(), 0);
	assert_null(cp_modules_find(fn));
	assert_int_equal(m->unloaded != 0, 1); /* the slot stays, marked */
	assert_int_equal(seen.unloaded, unloaded0 + 1);
	assert_int_equal(seen.last_unloaded_id, id1);
	/* The unload is an event of its own, after the load, before the next load. */
	unload1 = seen.last_unload_seq;
	assert_true(unload1 > load1);
	assert_int_equal(m->load_seq, load1);

	h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
	assert_non_null(h);
	assert_int_equal(cp_modules_sync(), 0);
	fn = dl_function(h, name);
	m2 = cp_modules_find(fn);
	assert_non_null(m2);
	assert_ptr_not_equal(m2, m);
	assert_true(m2->id > id1); /* ids are never reused */
	assert_true(m2->load_seq > unload1);
	assert_int_equal(seen.last_load_seq, m2->load_seq);
	dlclose(h);
	assert_int_equal(cp_modules_sync(), 0);
}

static void test_replay(void **state)
{
	int before = seen.loaded;

	(void)state;
	cp_modules_replay();
	assert_true(seen.loaded - before >= 3); /* executable, libc, vDSO at least */
}

/* Lookups racing with dlopen/dlclose/sync never miss a module that stays loaded. */
static volatile int race_stop;
static volatile long race_misses, race_lookups;

static void *race_reader(void *arg)
{
	uintptr_t pc = (uintptr_t)arg;
	const struct cp_module *want = cp_modules_find(pc);

	while (!race_stop) {
		const struct cp_module *m = cp_modules_find(pc);
		race_misses += m != want;
		race_lookups++;
	}
	return NULL;
}

static void test_concurrent_find(void **state)
{
	pthread_t th;
	int rounds = 0;

	(void)state;
	race_stop = 0;
	pthread_create(&th, NULL, race_reader, (void *)(uintptr_t)qsort);
	for (int i = 0; i < 200; i++) {
		void *h = NULL;
		for (size_t k = 0; k < 4 && !h; k++)
			h = dlopen(dl_candidates[(i + k) % 4], RTLD_NOW | RTLD_LOCAL);
		assert_int_equal(cp_modules_sync(), 0);
		if (h)
			dlclose(h);
		assert_int_equal(cp_modules_sync(), 0);
		rounds += h != NULL;
	}
	race_stop = 1;
	pthread_join(th, NULL);
	fprintf(stderr, "  %d load/unload rounds, %ld lookups, %ld misses\n", rounds, race_lookups,
		race_misses);
	assert_int_equal(race_misses, 0);
	assert_true(race_lookups > 0);
}

__attribute__((noinline)) long fde_target(long x);
__attribute__((noinline)) long fde_target(long x)
{
	__asm__ volatile("" : "+r"(x));
	return x * 7 + (x > 3 ? fde_target(x - 3) : 1);
}

/* The size of symbol name in path as nm -S prints it, 0 when unknown. */
static unsigned long nm_size(const char *path, const char *name)
{
	char cmd[1024], line[512], sym[256];
	unsigned long addr, size = 0, sz;
	char type;
	snprintf(cmd, sizeof cmd, "nm -S '%s' 2>/dev/null", path);
	FILE *p = popen(cmd, "r");
	while (p && fgets(line, sizeof line, p))
		if (sscanf(line, "%lx %lx %c %255s", &addr, &sz, &type, sym) == 4 &&
		    !strcmp(sym, name))
			size = sz;
	if (p)
		pclose(p);
	return size;
}

/* The FDE covering a pc: the probes size stripped functions by it (sub_HEX). */
static void test_fde_range(void **state)
{
	const struct cp_module *exe = cp_modules_find((uintptr_t)fde_target);
	uintptr_t lo = 0, hi = 0, lo2 = 0, hi2 = 0, fn = (uintptr_t)fde_target;
	(void)state;
	assert_int_equal(fde_target(10), 155);
	assert_non_null(exe);
	assert_int_equal(cp_cfi_fde_range(exe, fn, &lo, &hi), 0);
	assert_true(lo == fn && hi > lo);
	assert_int_equal(cp_cfi_fde_range(exe, hi - 1, &lo2, &hi2), 0);
	assert_true(lo2 == lo && hi2 == hi);
	unsigned long size = nm_size(exe->path, "fde_target");
	if (!size)
		skip();
	assert_int_equal(hi - lo, size);
	assert_int_equal(cp_cfi_fde_range(exe, exe->text_lo - 4096, &lo, &hi), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_find_basic), cmocka_unit_test(test_dlopen_epochs),
	    cmocka_unit_test(test_replay),     cmocka_unit_test(test_concurrent_find),
	    cmocka_unit_test(test_fde_range),
	};
	return cmocka_run_group_tests(tests, setup, NULL);
}
