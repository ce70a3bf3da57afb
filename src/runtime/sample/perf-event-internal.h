/* The perf-event source's state, shared by its signal-time half (perf-event.c: thread
 * start and stop, the handler's claims) and its init-time half (perf-event-init.c:
 * configuration, the process-start check, the exit notes). Private to sample/. */
#ifndef CP_RUNTIME_SAMPLE_PERF_EVENT_INTERNAL_H
#define CP_RUNTIME_SAMPLE_PERF_EVENT_INTERNAL_H

#include "events/events.h"
#include "runtime/core/runtime.h"

#include <sys/types.h>

struct perf_metric {
	struct cp_sample_source src; /* a copy of cp_source_perf named after the event */
	char name[32];
	struct cp_ev ev;
	uint32_t leader;		 /* metric index of the group leader (itself if it leads) */
	uint32_t last_member;		 /* leader: index of its last member (itself if alone) */
	uint64_t enabled_ns, running_ns; /* leader: over the threads stopped so far */
};

/* One per metric, indexed like cp_rt.metrics (only the perf ones are used). */
extern struct perf_metric cp_perf_metrics[CP_MF_MAX_METRICS];
/* The kernel refused to count kernel mode (perf_event_paranoid): user mode only. */
extern int cp_perf_exclude_kernel;
/* The source every perf metric's copy starts from. */
extern const struct cp_sample_source cp_source_perf;

static inline struct perf_metric *pm(const struct cp_metric *m)
{
	return &cp_perf_metrics[m->index];
}

/* Process start: can the kernel open the event (kernel mode, or user mode only)? Notes
 * why not (perf-event-init.c). 0 or -1. */
int cp_perf_process_init(struct cp_metric *m);
/* Opens p's event on tid in group (-1: as a leader). AS-safe. fd or -errno. */
int cp_perf_open(const struct perf_metric *p, pid_t tid, int group);

#endif
