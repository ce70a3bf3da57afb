/* Per-thread POSIX timers delivering the runtime's signal to one thread (SIGEV_THREAD_ID),
 * shared by the timer-based sources. Raw system calls: async-signal-safe. */
#ifndef CP_RUNTIME_SAMPLE_TIMER_H
#define CP_RUNTIME_SAMPLE_TIMER_H

#include "runtime/sample/source.h"

int cp_timer_thread_start(struct cp_metric *m, struct cp_source_thread *st, pid_t tid);
/* Clock id of another thread's CPU time (the kernel's per-thread CPUCLOCK_SCHED). */
clockid_t cp_thread_cpu_clock(pid_t tid);
void cp_timer_thread_stop(struct cp_metric *m, struct cp_source_thread *st);
int cp_timer_claims(struct cp_metric *m, struct cp_source_thread *st, const siginfo_t *si,
		    uint64_t *weight);

/* The first period of a thread's sampling: uniform in [1, period] rather than period, so
 * that a thread or process shorter than a period is sampled with probability length /
 * period (each sample weighs a full period): the expected total equals the time measured,
 * where a fixed first period would never sample what ends before it. AS-safe. */
uint64_t cp_first_period(uint64_t period, pid_t tid);

#endif
