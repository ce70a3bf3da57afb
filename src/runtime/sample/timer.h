/* Per-thread POSIX timers delivering the runtime's signal to one thread (SIGEV_THREAD_ID),
 * shared by the timer-based sources. Raw system calls: async-signal-safe. */
#ifndef CP_RUNTIME_SAMPLE_TIMER_H
#define CP_RUNTIME_SAMPLE_TIMER_H

#include "runtime/sample/source.h"

int cp_timer_thread_start(struct cp_metric *m, struct cp_source_thread *st);
void cp_timer_thread_stop(struct cp_metric *m, struct cp_source_thread *st);
int cp_timer_claims(struct cp_metric *m, struct cp_source_thread *st, const siginfo_t *si,
		    uint64_t *weight);

#endif
