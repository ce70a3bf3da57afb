/* realtime: wall-clock sampling of every thread, running or blocked, with a per-thread
 * CLOCK_MONOTONIC POSIX timer (perf's cpu-clock counts only while the thread runs, so it
 * would not show where threads wait). */
#include "runtime/sample/timer.h"

#include "runtime/core/runtime.h"

#include <time.h>

#include "base/sigsafe/banned.h"

static int realtime_process_init(struct cp_metric *m)
{
	m->mechanism = CP_MF_MECH_POSIX_TIMER;
	m->clock_id = CLOCK_MONOTONIC;
	return 0;
}

const struct cp_sample_source cp_source_realtime = {
    .name = "realtime",
    .unit = "ns",
    .source = CP_MF_SRC_REALTIME,
    .process_init = realtime_process_init,
    .thread_start = cp_timer_thread_start,
    .thread_stop = cp_timer_thread_stop,
    .claims = cp_timer_claims,
};
