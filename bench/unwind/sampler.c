/* Completeness probe: an LD_PRELOAD library that samples the process (a CPU-time POSIX
 * timer on a real-time signal, so it does not collide with a program's own SIGPROF; with
 * CP_SAMPLER_WALL=1 a 10 kHz CLOCK_MONOTONIC timer instead, which also samples threads
 * blocked in system calls) and
 * unwinds every sample with callpath's unwinder. At exit it prints one line:
 *   samples N complete C partial P failed F frames_cfi X fp Y scan Z signal S
 * plus up to 5 incomplete stacks (module+offset) for diagnosis. New threads are first
 * seen inside the handler (the async-signal-safe bounds path); dlopen is followed. */
#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "runtime/unwind/modules.h"
#include "runtime/unwind/unwind.h"

#define MAXF 512
#define KEEP 5

static unsigned long n_status[3], n_how[5], n_samples;
static struct cp_frame kept[KEEP][MAXF];
static int kept_n[KEEP], kept_status[KEEP];
static unsigned long n_kept;
static timer_t timer;
static int active;

static void on_sample(int sig, siginfo_t *si, void *ucv)
{
	struct cp_frame f[MAXF];
	enum cp_unwind_status st;
	int n = cp_unwind_context(ucv, f, MAXF, &st);
	unsigned long k;

	(void)sig;
	(void)si;
	__atomic_fetch_add(&n_samples, 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&n_status[st], 1, __ATOMIC_RELAXED);
	for (int i = 0; i < n; i++)
		__atomic_fetch_add(&n_how[f[i].how], 1, __ATOMIC_RELAXED);
	if (st != CP_UNWIND_COMPLETE && (k = __atomic_fetch_add(&n_kept, 1, __ATOMIC_RELAXED)) < KEEP) {
		memcpy(kept[k], f, sizeof(f[0]) * n);
		kept_n[k] = n;
		kept_status[k] = st;
	}
}

void *dlopen(const char *file, int mode)
{
	static void *(*real)(const char *, int);
	void *h;

	if (!real)
		real = (void *(*)(const char *, int))dlsym(RTLD_NEXT, "dlopen");
	h = real(file, mode);
	if (active)
		cp_modules_sync();
	return h;
}

__attribute__((constructor)) static void sampler_start(void)
{
	struct sigaction sa;
	struct sigevent sev;
	struct itimerspec its = {{0, 1000000}, {0, 1000000}};
	const char *wall = getenv("CP_SAMPLER_WALL");
	clockid_t clock = CLOCK_PROCESS_CPUTIME_ID;

	if (cp_unwind_init() < 0 || cp_modules_init(NULL) < 0)
		return;
	cp_unwind_thread_init();
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_sample;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigaction(SIGRTMIN + 3, &sa, NULL);
	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = SIGEV_SIGNAL;
	sev.sigev_signo = SIGRTMIN + 3;
	if (wall && *wall == '1') {
		clock = CLOCK_MONOTONIC;
		its.it_interval.tv_nsec = its.it_value.tv_nsec = 100000;
	}
	timer_create(clock, &sev, &timer);
	timer_settime(timer, 0, &its, NULL);
	active = 1;
}

static void print_frame(const struct cp_frame *f)
{
	uintptr_t pc = f->kind == CP_FRAME_RETURN ? f->pc - 1 : f->pc;
	const struct cp_module *m = cp_modules_find(pc);
	Dl_info di;

	fprintf(stderr, "    %#lx k%u how%u %s+%#lx %s\n", (unsigned long)f->pc, f->kind, f->how,
		m ? m->path : "?", m ? (unsigned long)(pc - m->bias) : 0ul,
		dladdr((void *)pc, &di) && di.dli_sname ? di.dli_sname : "");
}

__attribute__((destructor)) static void sampler_stop(void)
{
	if (!active)
		return;
	timer_delete(timer);
	active = 0;
	fprintf(stderr,
		"cp-sampler: samples %lu complete %lu partial %lu failed %lu frames_cfi %lu fp %lu "
		"scan %lu signal %lu\n",
		n_samples, n_status[0], n_status[1], n_status[2], n_how[1], n_how[2], n_how[3],
		n_how[4]);
	for (unsigned long k = 0; k < n_kept && k < KEEP; k++) {
		fprintf(stderr, "  incomplete sample (status %d):\n", kept_status[k]);
		for (int i = 0; i < kept_n[k] && i < 12; i++)
			print_frame(&kept[k][i]);
	}
}
