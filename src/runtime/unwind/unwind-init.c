/* The unwinder's init-time code: the recipe cache's table (mapped once, at process start)
 * and a thread's stack bounds from its pthread attributes when the thread starts
 * (pthread_getattr_np allocates, and for the main thread reads /proc/self/maps). Never
 * runs in a signal handler; the signal-time rest is in unwind.c and unwind-stack.c. */
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>

#include "base/error.h"
#include "runtime/unwind/unwind-internal.h"

/* The dynamic loader's entry code: glibc's x86-64 RTLD_START (_start, then _dl_start_user,
 * which calls _dl_init, which runs the preloaded and needed libraries' constructors) is
 * 61 bytes of assembly without CFI, followed by the loader's first function with an FDE.
 * A return address there that no FDE covers is the outermost frame, like the program's
 * _start (whose CFI says so). Without it, every sample in a constructor run after the
 * runtime's own (the runtime's start-up included) was a partial unwind. */
#define LOADER_START_LEN 64

static void loader_start_find(void)
{
	uintptr_t base = getauxval(AT_BASE);
	const ElfW(Ehdr) *eh = (const ElfW(Ehdr) *)base;
	if (base && !memcmp(eh->e_ident, ELFMAG, SELFMAG))
		uw_loader_start_install(base + eh->e_entry, base + eh->e_entry + LOADER_START_LEN);
}

/* The table is 2 MiB: mapped 2 MiB-aligned and advised as a huge page, so that the hot
 * path's random slot accesses cost one TLB entry instead of one per 4 KiB page. */
int cp_unwind_init(void)
{
	size_t size = uw_cache_bytes(), huge = 2ul << 20;
	uintptr_t p, aligned;

	if (uw_cache_ready())
		return 0;
	loader_start_find();
	p = (uintptr_t)mmap(NULL, size + huge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			    -1, 0);
	if ((void *)p == MAP_FAILED)
		return cp_error(CP_ENOMEM, "unwinder: cannot map its %zu KiB recipe cache: %s",
				size / 1024, strerror(errno));
	aligned = (p + huge - 1) & ~(huge - 1);
	if (aligned > p)
		munmap((void *)p, aligned - p);
	if (aligned + size < p + size + huge)
		munmap((void *)(aligned + size), p + size + huge - (aligned + size));
	madvise((void *)aligned, size, MADV_HUGEPAGE); /* advisory: fine if refused */
	uw_cache_install((void *)aligned);
	return 0;
}

void cp_unwind_thread_init(void)
{
	struct uw_thread *t = uw_thread_self();
	pthread_attr_t attr;
	void *addr;
	size_t size;

	if (pthread_getattr_np(pthread_self(), &attr) != 0) {
		cp_unwind_thread_init_signal_safe((uintptr_t)__builtin_frame_address(0));
		return;
	}
	if (pthread_attr_getstack(&attr, &addr, &size) == 0) {
		t->stack_lo = (uintptr_t)addr;
		t->stack_hi = (uintptr_t)addr + size;
	}
	pthread_attr_destroy(&attr);
	uw_query_altstack(t);
	t->inited = 1;
}
