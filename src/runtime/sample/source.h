/* Sample sources: a table of struct cp_sample_source, one file per source (cputime.c,
 * realtime.c, ...), so new event kinds (perf counters, synchronous triggers) plug in
 * without touching the handler, the CCT or the interposition code. Names, units and
 * default periods are in the event catalog (src/events, shared with the CLI).
 *
 * A source delivers the runtime's sampling signal (cp_rt.signo) to the sampled thread and
 * recognises its own deliveries from the siginfo. thread_start/thread_stop run in the
 * thread itself, possibly inside the signal handler (threads first seen by a sample), so
 * they use raw system calls only.
 *
 * Module sample/ (public: source.h, timer.h; *-internal.h private): above unwind/ and
 * below core/, which configures and drives it; uses events/ and the shared state
 * (core/runtime.h, core/fds.h). Signal-time files include base/sigsafe/banned.h; each
 * source's init-time code is in NAME-init.c. */
#ifndef CP_RUNTIME_SOURCE_H
#define CP_RUNTIME_SOURCE_H

#include <signal.h>
#include <stddef.h>
#include <sys/types.h>
#include <stdint.h>

struct cp_metric;

/* Per-thread state of one metric's source. */
struct cp_source_thread {
	int fd;		  /* perf_event fd, or -1 */
	uint64_t perf_id; /* PERF_EVENT_IOC_ID of fd: tells our fd from one the program reused */
	int timer_valid;  /* a POSIX timer was created */
	void *timer;	  /* timer_t */
	/* perf-event.c: the group this fd counts in (its leader's fd; our position in the
	 * PERF_FORMAT_GROUP read) and the value at the last sample. */
	int group_fd;
	uint32_t group_pos;
	uint64_t last;
	int first_period; /* opened with a shortened first period (cp_first_period): the
			   * first sample sets the real one */
};

struct cp_sample_source {
	const char *name; /* the -e name: "cputime" */
	const char *unit; /* unit of the stored values: "ns" */
	uint32_t source;  /* enum cp_mf_source */
	/* Process start (outside signal context): pick the mechanism, probe the kernel.
	 * Writes notes through cp_rt_note(). 0, or -1 to disable this metric. */
	int (*process_init)(struct cp_metric *m);
	void (*process_fini)(struct cp_metric *m);
	/* Arms sampling of thread tid of this process (the calling thread, or one adopted by
	 * the task scan: threads not started through pthread_create). Async-signal-safe.
	 * 0 or -errno. */
	int (*thread_start)(struct cp_metric *m, struct cp_source_thread *st, pid_t tid);
	void (*thread_stop)(struct cp_metric *m, struct cp_source_thread *st);
	/* Is this delivery ours? If so, sets *weight (in unit) and returns 1. AS-safe. */
	int (*claims)(struct cp_metric *m, struct cp_source_thread *st, const siginfo_t *si,
		      uint64_t *weight);
};

/* One requested metric: which source, which period, how it is delivered. */
struct cp_metric {
	const struct cp_sample_source *src;
	uint32_t index;	    /* position in the process file's metrics[] */
	uint32_t mechanism; /* enum cp_mf_mechanism, chosen by process_init */
	uint64_t period;
	int disabled;
	int clock_id; /* for timer-based sources */
};

/* Closes st->fd if it still is our perf event (the program may have closed it and reused
 * the number). disable: also stop the event (not in a fork child: the event is shared). */
void cp_perf_fd_close(struct cp_source_thread *st, int disable);

/* Our perf_event descriptors live at or above this number (programs that dup2 onto low
 * numbers leave them alone); cp_perf_fd_raise moves fd there and marks it owned. */
#define CP_PERF_FD_FLOOR 800
int cp_perf_fd_raise(int fd);
/* Routes fd's overflow signal (cp_rt.signo) to thread tid: F_SETOWN_EX, F_SETSIG, O_ASYNC.
 * Does not enable the event. AS-safe. 0 or -errno. */
int cp_perf_route(int fd, pid_t tid);

/* perf-event.c: perf_event events by name (src/events/events.h) as metrics.
 * cp_perf_config: spec[0, len) is a perf event? 1 and *m filled (src, period), 0 if not a
 * perf event name, -1 if malformed (bad period). split: one group per event (the CLI
 * found they do not fit in one). */
int cp_perf_config(const char *spec, size_t len, struct cp_metric *m, int split);
/* At exit, after every thread stopped: multiplexing ratios as NOTEs. */
void cp_perf_notes(void);

/* All known sources, NULL-terminated. */
extern const struct cp_sample_source *const cp_sample_sources[];
const struct cp_sample_source *cp_sample_source_find(const char *name, unsigned len);

/* Marks a POSIX timer delivery as ours: sival_int = CP_TIMER_MAGIC | metric index. */
#define CP_TIMER_MAGIC 0x43500000
#define CP_TIMER_MAGIC_MASK 0x7fffff00

#endif
