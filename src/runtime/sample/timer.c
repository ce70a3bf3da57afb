/* POSIX per-thread timers (see timer.h). */
#include "runtime/sample/timer.h"

#include "runtime/core/runtime.h"

#include <errno.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "base/sigsafe/banned.h"

clockid_t cp_thread_cpu_clock(pid_t tid)
{
	return (clockid_t)((~(unsigned)tid << 3) | 6);
}

uint64_t cp_first_period(uint64_t period, pid_t tid)
{
	struct timespec ts;
	syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &ts);
	uint64_t x = (uint64_t)ts.tv_nsec * 0x9e3779b97f4a7c15ull ^ (uint64_t)ts.tv_sec ^
		     (uint64_t)tid << 32;
	x ^= x >> 30; /* splitmix64's finaliser */
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	x ^= x >> 31;
	return period ? 1 + x % period : 0;
}

int cp_timer_thread_start(struct cp_metric *m, struct cp_source_thread *st, pid_t tid)
{
	clockid_t clock = m->clock_id;
	/* Another thread's CPU time: CLOCK_THREAD_CPUTIME_ID would be the caller's. */
	if (clock == CLOCK_THREAD_CPUTIME_ID && tid != (pid_t)syscall(SYS_gettid))
		clock = cp_thread_cpu_clock(tid);
	struct sigevent sev;
	int kernel_timer = -1;
	__builtin_memset(&sev, 0, sizeof sev);
	sev.sigev_notify = SIGEV_THREAD_ID;
	sev.sigev_signo = cp_rt.signo;
	sev.sigev_value.sival_int = CP_TIMER_MAGIC | (int)m->index;
	sev._sigev_un._tid = tid;
	/* The raw system call: glibc's timer_create is AS-safe for SIGEV_THREAD_ID too, but
	 * the kernel's timer id is what we keep, with no libc bookkeeping. */
	if (syscall(SYS_timer_create, clock, &sev, &kernel_timer))
		return -errno;
	struct itimerspec its;
	its.it_interval.tv_sec = (time_t)(m->period / 1000000000u);
	its.it_interval.tv_nsec = (long)(m->period % 1000000000u);
	uint64_t first = cp_first_period(m->period, tid);
	its.it_value.tv_sec = (time_t)(first / 1000000000u);
	its.it_value.tv_nsec = (long)(first % 1000000000u);
	if (syscall(SYS_timer_settime, kernel_timer, 0, &its, NULL)) {
		int err = errno;
		syscall(SYS_timer_delete, kernel_timer);
		return -err;
	}
	st->timer = (void *)(intptr_t)kernel_timer;
	st->timer_valid = 1;
	return 0;
}

void cp_timer_thread_stop(struct cp_metric *m, struct cp_source_thread *st)
{
	if (!__atomic_exchange_n(&st->timer_valid, 0, __ATOMIC_ACQ_REL))
		return;
	syscall(SYS_timer_delete, (int)(intptr_t)st->timer);
}

int cp_timer_claims(struct cp_metric *m, struct cp_source_thread *st, const siginfo_t *si,
		    uint64_t *weight)
{
	if (si->si_code != SI_TIMER || si->si_value.sival_int != (int)(CP_TIMER_MAGIC | m->index))
		return 0;
	/* Expirations the kernel merged into this one (tick-based CPU timers merge ~3 of 4 at
	 * 1 kHz on a 250 Hz kernel) still carry their time. */
	*weight = m->period * (1u + (unsigned)(si->si_overrun > 0 ? si->si_overrun : 0));
	return 1;
}
