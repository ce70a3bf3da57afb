/* handler-time.so: measures how long a profiler's sampling signal handler runs, per
 * sample, with the TSC — a per-sample cost that run-to-run noise of a shared VM cannot hide
 * (wall-clock differences of a few ms are below that noise; see run.sh).
 *
 * LD_PRELOAD it together with the profiler. It interposes sigaction() and signal(): when a
 * handler is installed for SIGPROF (or HT_SIGNAL=<number>), the kernel is given a wrapper
 * that reads the TSC, calls the real handler and reads the TSC again. At exit it appends
 * one line to $HT_OUT (or stderr):
 *     handler-time sig=27 samples=N cycles=C tsc_hz=F mean_ns=X median_ns=Y p99_ns=Z
 *                  first100_ns=W long=L trimmed_mean_ns=T
 * W: the time spent in the first 100 samples (cold caches); L: runs longer than 500 us,
 * which on a loaded machine are the thread being descheduled inside the handler, and T the
 * mean without them (the figure the summary uses).
 * What it does not see: the kernel's cost of the timer and of signal delivery/sigreturn
 * (the same mechanism for every signal-based profiler) and cache pollution.
 * Build: gcc -O2 -shared -fPIC -o handler-time.so handler-time.c -ldl */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

typedef int (*sigaction_fn)(int, const struct sigaction *, struct sigaction *);

static int watched = SIGPROF;
static void (*real_handler)(int, siginfo_t *, void *);
static _Atomic uint64_t total_cycles, total_samples, first_cycles, long_cycles, long_samples;
static uint64_t long_limit; /* cycles: a handler run longer than 500 us was descheduled */
static double hz_at_start;
#define HT_KEEP 65536 /* per-sample times kept for the median */
static uint32_t kept[HT_KEEP];

static void timed_handler(int sig, siginfo_t *info, void *uc)
{
	uint64_t t0 = __rdtsc();
	real_handler(sig, info, uc);
	uint64_t dt = __rdtsc() - t0;
	atomic_fetch_add_explicit(&total_cycles, dt, memory_order_relaxed);
	uint64_t i = atomic_fetch_add_explicit(&total_samples, 1, memory_order_relaxed);
	if (i < HT_KEEP)
		kept[i] = dt > UINT32_MAX ? UINT32_MAX : (uint32_t)dt;
	if (dt > long_limit) {
		atomic_fetch_add_explicit(&long_cycles, dt, memory_order_relaxed);
		atomic_fetch_add_explicit(&long_samples, 1, memory_order_relaxed);
	}
	if (i < 100) /* the first samples pay for cold caches (e.g. unwind recipes) */
		atomic_fetch_add_explicit(&first_cycles, dt, memory_order_relaxed);
}

static sigaction_fn next_sigaction(void)
{
	static sigaction_fn fn;
	if (!fn)
		fn = (sigaction_fn)dlsym(RTLD_NEXT, "sigaction");
	return fn;
}

int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	if (sig != watched || !act || act->sa_handler == SIG_IGN || act->sa_handler == SIG_DFL)
		return next_sigaction()(sig, act, old);
	struct sigaction wrapped = *act;
	/* a plain handler ignores the two extra arguments, so one cast serves both kinds */
	real_handler = (void (*)(int, siginfo_t *, void *))act->sa_sigaction;
	wrapped.sa_sigaction = timed_handler;
	wrapped.sa_flags |= SA_SIGINFO;
	return next_sigaction()(sig, &wrapped, old);
}

sighandler_t signal(int sig, sighandler_t handler)
{
	struct sigaction act = {0}, old;
	act.sa_handler = handler;
	act.sa_flags = SA_RESTART;
	if (sigaction(sig, &act, &old) < 0)
		return SIG_ERR;
	return old.sa_handler;
}

static double tsc_hz(void)
{
	struct timespec a, b, pause = {0, 50 * 1000 * 1000};
	clock_gettime(CLOCK_MONOTONIC_RAW, &a);
	uint64_t c0 = __rdtsc();
	nanosleep(&pause, NULL);
	uint64_t c1 = __rdtsc();
	clock_gettime(CLOCK_MONOTONIC_RAW, &b);
	return (double)(c1 - c0) / ((b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9);
}

__attribute__((constructor)) static void ht_init(void)
{
	hz_at_start = tsc_hz(); /* 50 ms; these runs are not timed as a whole */
	long_limit = (uint64_t)(500e-6 * hz_at_start);
	const char *s = getenv("HT_SIGNAL");
	if (s)
		watched = atoi(s);
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return (x > y) - (x < y);
}

__attribute__((destructor)) static void ht_report(void)
{
	uint64_t n = atomic_load(&total_samples), c = atomic_load(&total_cycles);
	uint64_t ln = atomic_load(&long_samples), lc = atomic_load(&long_cycles);
	uint64_t k = n < HT_KEEP ? n : HT_KEEP;
	qsort(kept, k, sizeof kept[0], cmp_u32);
	double hz = hz_at_start;
	char line[256];
	int len = snprintf(line, sizeof line,
			   "handler-time sig=%d samples=%llu cycles=%llu tsc_hz=%.0f mean_ns=%.1f "
			   "median_ns=%.1f p99_ns=%.1f first100_ns=%.0f long=%llu trimmed_mean_ns=%.1f\n",
			   watched, (unsigned long long)n, (unsigned long long)c, hz,
			   n ? c / hz * 1e9 / n : 0.0, k ? kept[k / 2] / hz * 1e9 : 0.0,
			   k ? kept[k * 99 / 100] / hz * 1e9 : 0.0,
			   atomic_load(&first_cycles) / hz * 1e9, (unsigned long long)ln,
			   n > ln ? (c - lc) / hz * 1e9 / (n - ln) : 0.0);
	const char *out = getenv("HT_OUT");
	int fd = out ? open(out, O_WRONLY | O_CREAT | O_APPEND, 0644) : 2;
	if (fd >= 0 && write(fd, line, len) < 0)
		fd = -1;
	if (out && fd >= 0)
		close(fd);
}
