/* perf_event events by name: the one place that turns `-e EVENT[@PERIOD]` into a
 * struct perf_event_attr, shared by `callpath record` (which checks every event before the
 * program starts) and the runtime (sample/perf-event.c, which opens them per thread).
 *
 * Two libraries:
 *   cp_events      events.c: generic hardware and software names, raw codes (rNNNN), the
 *                  period syntax, and the encoded form the CLI passes to the runtime. No
 *                  allocation, no third-party library: the preloaded runtime links it.
 *   cp_events_cli  events-pfm.c, events-check.c: PMU-specific names through libpfm4, the
 *                  trial open on the CLI's own process with the errors users hit, the
 *                  event listing. Only the CLI links it (libpfm4 lives here only).
 *
 * Spec syntax (docs/cmd-record.md):
 *   NAME            the event's default period
 *   NAME@N          one sample every N events (time events: N ns, or N with ns/us/ms/s)
 *   NAME@fN         frequency mode: about N samples per second of the thread's run time
 *                   (the kernel adjusts the period; weights are the counts read)
 * Encoded form (CALLPATH_EVENTS, written by the CLI for names only libpfm4 knows):
 *   NAME@P#TYPE.CONFIG.CONFIG1.CONFIG2   hex fields; P is N or fN as above */
#ifndef CP_EVENTS_H
#define CP_EVENTS_H

#include <stddef.h>
#include <stdint.h>

enum cp_ev_kind {
	CP_EV_HARDWARE = 1, /* generic hardware (PERF_TYPE_HARDWARE) */
	CP_EV_SOFTWARE = 2, /* PERF_TYPE_SOFTWARE */
	CP_EV_RAW = 3,	    /* rNNNN: PERF_TYPE_RAW */
	CP_EV_PMU = 4,	    /* resolved by libpfm4 (any type but software) */
};

/* A row of the generic table. */
struct cp_ev_desc {
	const char *name;
	uint32_t type; /* PERF_TYPE_HARDWARE / PERF_TYPE_SOFTWARE */
	uint64_t config;
	uint64_t default_period; /* in events, or ns for time events */
	uint64_t min_period;
	int time_based; /* counts nanoseconds: the period takes a time suffix */
	const char *help;
};

extern const struct cp_ev_desc cp_ev_table[];
extern const size_t cp_ev_table_len;

/* One resolved event. */
struct cp_ev {
	char name[64]; /* as typed, aliases canonical (the metric's name, truncated to 31 bytes) */
	int kind;      /* enum cp_ev_kind */
	uint32_t type;
	uint64_t config, config1, config2;
	int freq;	 /* 1: period is a frequency in samples per second */
	uint64_t period; /* events (or ns) per sample, or the frequency */
	uint64_t min_period;
	int time_based;
};

enum {
	CP_EV_OK = 0,
	CP_EV_UNKNOWN = -1,    /* no such name (libpfm4 may still know it) */
	CP_EV_BAD_PERIOD = -2, /* err says why */
	CP_EV_BAD_SPEC = -3,   /* name too long, malformed encoding */
	CP_EV_NO_PAPI = -4,    /* a PAPI preset without a perf equivalent here (err says) */
};

/* Does the spec name a perf event at all (generic, software, raw or encoded)? Parses
 * spec[0, len) into *ev; err (may be NULL) gets a message for CP_EV_BAD_PERIOD. */
int cp_ev_parse(const char *spec, size_t len, struct cp_ev *ev, char *err, size_t errcap);
/* Parses only the @PERIOD part (text after '@') for an event already resolved. */
int cp_ev_parse_period(struct cp_ev *ev, const char *text, char *err, size_t errcap);
/* The encoded form of ev for CALLPATH_EVENTS. 0, or -1 if cap is too small. */
int cp_ev_encode(const struct cp_ev *ev, char *out, size_t cap);
/* The name an alias is measured under ("cpu-cycles", "PAPI_TOT_CYC" -> "cycles"); name
 * itself if it is none. cp_ev_parse names events by it. */
const char *cp_ev_canonical(const char *name);
/* Looks a name up in the generic table (aliases included). */
const struct cp_ev_desc *cp_ev_find(const char *name, size_t len);
struct perf_event_attr;
/* The attribute the runtime opens per thread (and the CLI tries): disabled, sampling with
 * ev's period or frequency, read as a group (PERF_FORMAT_GROUP with enabled/running
 * times), user space only when exclude_kernel. */
void cp_ev_attr(const struct cp_ev *ev, int exclude_kernel, struct perf_event_attr *attr);
#define CP_EV_READ_FORMAT                                                                          \
	(PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING)
/* Software events are never multiplexed and need no PMU. */
static inline int cp_ev_is_software(const struct cp_ev *ev)
{
	return ev->kind == CP_EV_SOFTWARE;
}

/* ---- cp_events_cli only ---- */

/* Resolves spec with the generic table, raw codes, then libpfm4. 0, or a CP_EV_* code with
 * a message for the user in err (unknown names list close ones). */
int cp_ev_resolve(const char *spec, struct cp_ev *ev, char *err, size_t errcap);
/* Up to six names close to `typed` (edit distance, substring) from extra[] (NULL-ended,
 * may be NULL), the generic table and libpfm4, comma-separated in out. Returns how many. */
int cp_ev_suggest(const char *typed, const char *const *extra, char *out, size_t cap);
/* Opens the events on the calling process as the runtime will open them on each thread
 * (one group for all, hardware ones sampled too), enables them, runs a little and reads
 * them back. 0 if all work together; 1 if they work but not all in one group (the PMU
 * must multiplex them: *split is set); a negative errno with a message for the user
 * (EACCES/EPERM, no PMU, event not on this PMU, too many events). */
int cp_ev_check(const struct cp_ev *evs, int n, int *split, char *err, size_t errcap);
/* Prints the events (generic, software, libpfm4 by PMU) whose name contains pattern
 * (NULL: all), marking those that cannot be opened here. */
void cp_ev_list(void *file, const char *pattern);

#endif
