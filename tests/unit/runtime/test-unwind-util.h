/* Helpers for the unwinder tests: a sampling harness (signal + POSIX timer) and an
 * independent symbolizer (the test binary's own .symtab, dladdr for shared objects). */
#ifndef CP_TEST_UNWIND_UTIL_H
#define CP_TEST_UNWIND_UTIL_H

#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "runtime/unwind/unwind.h"

#define UT_MAX_SAMPLES 8192
#define UT_MAX_FRAMES 128

struct ut_sample {
	int n;
	int status;
	struct cp_frame f[UT_MAX_FRAMES];
};

static struct ut_sample ut_samples[UT_MAX_SAMPLES];
static volatile int ut_nsamples;
static volatile int ut_recording;
static volatile int ut_in_unwind; /* set while the handler unwinds (malloc check) */
static timer_t ut_timer;

static void ut_handler(int sig, siginfo_t *si, void *ucv)
{
	int i;
	enum cp_unwind_status st;

	(void)sig;
	(void)si;
	if (!ut_recording || (i = ut_nsamples) >= UT_MAX_SAMPLES)
		return;
	ut_in_unwind = 1;
	ut_samples[i].n = cp_unwind_context(ucv, ut_samples[i].f, UT_MAX_FRAMES, &st);
	ut_in_unwind = 0;
	ut_samples[i].status = st;
	ut_nsamples = i + 1;
}

static inline void ut_install(int sig, void (*h)(int, siginfo_t *, void *))
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = h;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaction(sig, &sa, NULL);
}

/* A CLOCK_MONOTONIC timer (hrtimer: real 10 kHz, unlike ITIMER_PROF's kernel tick),
 * delivered to thread tid (0: the process). */
static inline void ut_start_tid(int sig, long period_ns, pid_t tid)
{
	struct sigevent sev;
	struct itimerspec its;

	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = tid ? SIGEV_THREAD_ID : SIGEV_SIGNAL;
	sev.sigev_signo = sig;
	sev._sigev_un._tid = tid;
	timer_create(CLOCK_MONOTONIC, &sev, &ut_timer);
	its.it_interval.tv_sec = 0;
	its.it_interval.tv_nsec = period_ns;
	its.it_value = its.it_interval;
	ut_nsamples = 0;
	ut_recording = 1;
	timer_settime(ut_timer, 0, &its, NULL);
}

static inline void ut_start(int sig, long period_ns)
{
	ut_start_tid(sig, period_ns, 0);
}

static inline void ut_stop(void)
{
	ut_recording = 0;
	timer_delete(ut_timer);
}

/* The end of the calling thread's stack mapping. */
static inline uintptr_t uw_stack_top(void)
{
	pthread_attr_t attr;
	void *addr;
	size_t size;

	pthread_getattr_np(pthread_self(), &attr);
	pthread_attr_getstack(&attr, &addr, &size);
	pthread_attr_destroy(&attr);
	return (uintptr_t)addr + size;
}

/* ---- symbolizer over the executable's .symtab ---- */
struct ut_symtab {
	const Elf64_Sym *syms;
	size_t nsyms;
	const char *strs;
	uintptr_t bias;
	uintptr_t plt_lo, plt_hi; /* .plt, .plt.sec, .plt.got (runtime, union) */
};

static struct ut_symtab ut_st;

static inline int ut_exe_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	*(uintptr_t *)arg = info->dlpi_addr;
	return 1; /* the first object is the executable */
}

static inline void ut_symtab_load(void)
{
	int fd;
	struct stat sb;
	const uint8_t *img;
	const Elf64_Ehdr *eh;
	const Elf64_Shdr *sh;
	const char *shstr;

	if (ut_st.syms)
		return;
	fd = open("/proc/self/exe", O_RDONLY);
	if (fd < 0)
		return;
	if (fstat(fd, &sb) < 0) {
		close(fd);
		return;
	}
	img = mmap(NULL, sb.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	eh = (const Elf64_Ehdr *)img;
	sh = (const Elf64_Shdr *)(img + eh->e_shoff);
	shstr = (const char *)img + sh[eh->e_shstrndx].sh_offset;
	dl_iterate_phdr(ut_exe_cb, &ut_st.bias);
	ut_st.plt_lo = UINTPTR_MAX;
	for (int i = 0; i < eh->e_shnum; i++) {
		const char *nm = shstr + sh[i].sh_name;
		if (sh[i].sh_type == SHT_SYMTAB) {
			ut_st.syms = (const Elf64_Sym *)(img + sh[i].sh_offset);
			ut_st.nsyms = sh[i].sh_size / sizeof(Elf64_Sym);
			ut_st.strs = (const char *)img + sh[sh[i].sh_link].sh_offset;
		} else if (!strncmp(nm, ".plt", 4)) {
			uintptr_t lo = ut_st.bias + sh[i].sh_addr;
			if (lo < ut_st.plt_lo)
				ut_st.plt_lo = lo;
			if (lo + sh[i].sh_size > ut_st.plt_hi)
				ut_st.plt_hi = lo + sh[i].sh_size;
		}
	}
}

/* Name of the function containing pc ("?" if unknown). Return addresses: pass pc - 1. */
static inline const char *ut_sym(uintptr_t pc)
{
	Dl_info di;

	ut_symtab_load();
	for (size_t i = 0; i < ut_st.nsyms; i++) {
		const Elf64_Sym *s = &ut_st.syms[i];
		uintptr_t lo = ut_st.bias + s->st_value;
		if (ELF64_ST_TYPE(s->st_info) == STT_FUNC && s->st_size && pc >= lo &&
		    pc < lo + s->st_size)
			return ut_st.strs + s->st_name;
	}
	if (dladdr((void *)pc, &di) && di.dli_sname)
		return di.dli_sname;
	return "?";
}

static inline const char *ut_frame_sym(const struct cp_frame *f)
{
	return ut_sym(f->kind == CP_FRAME_RETURN ? f->pc - 1 : f->pc);
}

static inline void ut_print(const struct ut_sample *s)
{
	fprintf(stderr, "  status %d, %d frames:\n", s->status, s->n);
	for (int i = 0; i < s->n; i++) {
		Dl_info di;
		uintptr_t off = 0;
		const char *obj = "?";
		if (dladdr((void *)s->f[i].pc, &di)) {
			off = s->f[i].pc - (uintptr_t)di.dli_fbase;
			obj = di.dli_fname;
		}
		fprintf(stderr, "    #%d %#lx k%u how%u %s (%s+%#lx)\n", i,
			(unsigned long)s->f[i].pc, s->f[i].kind, s->f[i].how,
			ut_frame_sym(&s->f[i]), obj, (unsigned long)off);
	}
}

/* Index of the first frame >= from whose function is name, or -1. */
static inline int ut_find(const struct ut_sample *s, int from, const char *name)
{
	for (int i = from; i < s->n; i++)
		if (!strcmp(ut_frame_sym(&s->f[i]), name))
			return i;
	return -1;
}

/* Do the names appear in this order (not necessarily adjacent)? */
static inline int ut_in_order(const struct ut_sample *s, const char *const *names, int k)
{
	int at = 0;

	for (int i = 0; i < k; i++) {
		at = ut_find(s, at, names[i]);
		if (at < 0)
			return 0;
		at++;
	}
	return 1;
}

#endif
