/* The safe point of attach --inject: a stopped thread may call the loader when none of its
 * frames is in the dynamic loader (which holds the loader's locks) or in a libc function
 * that holds the allocator's or the loader's locks. The thread's stack is read
 * (process_vm_readv) and unwound with the runtime's unwinder (cp_unwind_copy, the target's
 * modules registered as for kernel-copy sampling); libc's functions are told apart by its
 * exported symbols (.dynsym: Debian's libc has no other). The allocator's internal
 * functions (_int_malloc, _int_free) are never reached by a tail call from the exported
 * ones (glibc 2.36: every entry point does work after the call), so the exported caller is
 * on the stack; an unwind that stopped inside libc is unsafe (the callers are unknown). */
#include "kcopy/inject-internal.h"
#include "kcopy/kcopy-internal.h"

#include "base/error.h"
#include "patch/select.h"
#include "runtime/unwind/modules.h"
#include "runtime/unwind/unwind.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#define KC_SAFE_STACK 32768
#define KC_SAFE_FRAMES 256

struct kc_fn {
	uintptr_t lo, hi;
	int unsafe;
};

struct kc_safety {
	pid_t pid;
	uintptr_t ld_lo, ld_hi; /* the dynamic loader's mappings */
	uintptr_t libc_lo, libc_hi;
	struct kc_fn *fns; /* libc's exported functions, by address */
	size_t nfns;
};

/* Exported libc functions that take the allocator's or the loader's locks (or run the
 * program's code while holding them: dl_iterate_phdr's callback). */
static int name_unsafe(const char *n)
{
	static const char *const prefixes[] = {"dl",
					       "__libc_dl",
					       "_dl_",
					       "__libc_malloc",
					       "__libc_free",
					       "__libc_calloc",
					       "__libc_realloc",
					       "__libc_memalign",
					       "fork",
					       "_Fork",
					       "__libc_fork",
					       "vfork",
					       "pthread_create",
					       "exit",
					       "_exit"};
	if (strstr(n, "alloc") || strstr(n, "free") || strstr(n, "mallinfo") || strstr(n, "malloc"))
		return 1;
	for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++)
		if (!strncmp(n, prefixes[i], strlen(prefixes[i])))
			return 1;
	return 0;
}

/* Where path is mapped in pid: its lowest address (the load bias of a shared object whose
 * first segment is at 0) and the end of its last mapping. 0 if not mapped. */
static int mapped_range(pid_t pid, const char *suffix, uintptr_t *lo, uintptr_t *hi, char *path,
			size_t cap)
{
	char file[64], line[4096 + 128];
	snprintf(file, sizeof file, "/proc/%d/maps", (int)pid);
	FILE *f = fopen(file, "r");
	*lo = *hi = 0;
	if (!f)
		return 0;
	while (fgets(line, sizeof line, f)) {
		uint64_t a, b;
		int n = 0;
		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %*s %*s %*s %*s %n", &a, &b, &n) < 2 ||
		    !n)
			continue;
		char *p = line + n;
		p[strcspn(p, "\n")] = 0;
		size_t pl = strlen(p), sl = strlen(suffix);
		if (p[0] != '/' || pl < sl || strcmp(p + pl - sl, suffix))
			continue;
		if (!*lo || a < *lo)
			*lo = a;
		if (b > *hi)
			*hi = b;
		if (pl < cap)
			memcpy(path, p, pl + 1);
	}
	fclose(f);
	return *lo != 0;
}

static int fn_cmp(const void *a, const void *b)
{
	const struct kc_fn *x = a, *y = b;
	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* Calls each(name, address in pid, size) for the exported functions of the library. */
static int dynsym_each(pid_t pid, const char *suffix,
		       int (*each)(void *, const char *, uintptr_t, uint64_t), void *arg)
{
	char path[4096];
	uintptr_t lo, hi;
	struct cp_patch_elf e;
	struct cp_patch_elf_iter it;
	struct cp_patch_func fn;
	if (!mapped_range(pid, suffix, &lo, &hi, path, sizeof path) || cp_patch_elf_map(&e, path))
		return -1;
	cp_patch_elf_iter_init(&it);
	int stop = 0;
	while (!stop && cp_patch_elf_next(&e, &it, &fn))
		if (it.pass) /* .dynsym */
			stop = each(arg, fn.name, lo + fn.sym->st_value, fn.sym->st_size);
	cp_patch_elf_unmap(&e);
	return 0;
}

static int add_fn(void *arg, const char *name, uintptr_t addr, uint64_t size)
{
	struct kc_safety *k = arg;
	if (!size)
		return 0;
	struct kc_fn *f = realloc(k->fns, (k->nfns + 1) * sizeof *f);
	if (!f)
		return 1;
	k->fns = f;
	f[k->nfns++] = (struct kc_fn){addr, addr + size, name_unsafe(name)};
	return 0;
}

struct kc_safety *kc_safety_open(pid_t pid)
{
	char path[4096];
	struct kc_safety *k = calloc(1, sizeof *k);
	if (!k)
		return NULL;
	k->pid = pid;
	mapped_range(pid, "/ld-linux-x86-64.so.2", &k->ld_lo, &k->ld_hi, path, sizeof path);
	mapped_range(pid, "/libc.so.6", &k->libc_lo, &k->libc_hi, path, sizeof path);
	dynsym_each(pid, "/libc.so.6", add_fn, k);
	qsort(k->fns, k->nfns, sizeof *k->fns, fn_cmp);
	if (cp_unwind_init() || kc_target_scan(pid)) {
		kc_safety_close(k);
		return NULL;
	}
	return k;
}

void kc_safety_close(struct kc_safety *k)
{
	if (k)
		free(k->fns);
	free(k);
}

/* The exported libc function containing pc, or NULL. */
static const struct kc_fn *libc_fn(const struct kc_safety *k, uintptr_t pc)
{
	size_t lo = 0, hi = k->nfns;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (k->fns[mid].lo <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* Aliases share addresses: any entry containing pc that is unsafe decides. */
	const struct kc_fn *found = NULL;
	for (size_t i = lo; i-- > 0 && k->fns[i].lo + 65536 > pc;)
		if (pc < k->fns[i].hi && (!found || k->fns[i].unsafe))
			found = &k->fns[i];
	return found;
}

/* 1 safe, 0 not, for the frames of one stack, innermost first; complete: the unwind
 * reached the outermost frame. */
static int frames_safe(const struct kc_safety *k, const struct cp_frame *f, int n, int complete)
{
	int last_in_libc = 0;
	for (int i = 0; i < n; i++) {
		uintptr_t pc = f[i].kind == CP_FRAME_RETURN ? f[i].pc - 1 : f[i].pc;
		if (pc >= k->ld_lo && pc < k->ld_hi)
			return 0;
		last_in_libc = pc >= k->libc_lo && pc < k->libc_hi;
		const struct kc_fn *fn = last_in_libc ? libc_fn(k, pc) : NULL;
		if (fn && fn->unsafe)
			return 0;
	}
	/* Stopped inside libc: the callers that were not seen may hold the locks. */
	return complete || !last_in_libc;
}

int kc_thread_safe(struct kc_safety *k, pid_t tid)
{
	static uint8_t stack[KC_SAFE_STACK];
	static struct cp_frame frames[KC_SAFE_FRAMES];
	struct user_regs_struct r;
	if (kc_regs_get(tid, &r))
		return -1;
	const unsigned long long *src[17] = {&r.rax, &r.rdx, &r.rcx, &r.rbx, &r.rsi, &r.rdi,
					     &r.rbp, &r.rsp, &r.r8,  &r.r9,  &r.r10, &r.r11,
					     &r.r12, &r.r13, &r.r14, &r.r15, &r.rip};
	struct cp_unwind_copy c;
	for (int i = 0; i < 17; i++)
		c.regs[i] = (uintptr_t)*src[i];
	c.known = (1u << 17) - 1;
	c.stack_addr = r.rsp;
	/* Up to the end of the stack's mapping: shorter reads until one succeeds. */
	ssize_t got = -1;
	for (size_t len = sizeof stack; len >= 4096 && got <= 0; len /= 2) {
		struct iovec local = {stack, len}, remote = {(void *)r.rsp, len};
		got = process_vm_readv(tid, &local, 1, &remote, 1, 0);
	}
	c.stack = stack;
	c.stack_len = got > 0 ? (size_t)got : 0;
	enum cp_unwind_status status;
	int n = cp_unwind_copy(&c, frames, KC_SAFE_FRAMES, &status);
	if (n <= 0)
		return 0;
	return frames_safe(k, frames, n, status == CP_UNWIND_COMPLETE);
}

struct sym_find {
	const char *name;
	uintptr_t addr;
};

static int sym_match(void *arg, const char *name, uintptr_t addr, uint64_t size)
{
	struct sym_find *s = arg;
	(void)size;
	if (strcmp(name, s->name))
		return 0;
	s->addr = addr;
	return 1;
}

uintptr_t kc_symbol_in(pid_t pid, const char *suffix, const char *name)
{
	struct sym_find s = {name, 0};
	if (dynsym_each(pid, suffix, sym_match, &s))
		return 0;
	return s.addr;
}
