/* Events by name: the one place that turns `-e EVENT[@PERIOD]` into what is measured, with
 * one catalog (cp_ev_table) and one period parser, shared by `callpath record` (which
 * checks every event before the program starts) and the runtime (core/config.c reads
 * CALLPATH_EVENTS with it; sample/perf-event-init.c opens perf events from it). The
 * layering: below the runtime and the CLI; it uses only libc (and libpfm4 in
 * cp_events_cli).
 *
 * The catalog names two families of events:
 *   the runtime's own   cputime, realtime (timers, sample/) and the trigger families
 *                       alloc, io, wait (core/sync.c: no period); rows [0,
 *                       cp_ev_runtime_len) of the table
 *   perf_event          generic hardware and software names, raw codes (rNNNN), and
 *                       PMU-specific names through libpfm4 (CLI only)
 *
 * Two libraries:
 *   cp_events      events.c: the catalog, raw codes, the period syntax, and the encoded
 *                  form the CLI passes to the runtime. No allocation, no third-party
 *                  library: the preloaded runtime links it (PIC, hidden visibility).
 *   cp_events_cli  events-cli.c: PMU-specific names through libpfm4, the trial open on
 *                  the CLI's own process with the errors users hit, the event listing.
 *                  Only the CLI links it (libpfm4 lives here only).
 *
 * Spec syntax (docs/cmd-record.md):
 *   NAME            the event's default period
 *   NAME@N          one sample every N events (time events: N ns, or N with ns/us/ms/s)
 *   NAME@fN         frequency mode: about N samples per second of the thread's run time
 *                   (the kernel adjusts the period; weights are the counts read); perf
 *                   events only
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
	CP_EV_TIMER = 5,    /* the runtime's timers (cputime, realtime): period in ns, no fN */
	CP_EV_TRIGGER = 6,  /* the runtime's trigger families (alloc, io, wait): no period */
};

/* A row of the catalog. */
struct cp_ev_desc {
	const char *name;
	int kind;	  /* enum cp_ev_kind: CP_EV_HARDWARE, _SOFTWARE, _TIMER or _TRIGGER */
	const char *unit; /* of the values stored: "ns", "bytes", "events" */
	uint32_t type;	  /* PERF_TYPE_HARDWARE / PERF_TYPE_SOFTWARE / PERF_TYPE_HW_CACHE */
	uint64_t config;
	uint64_t default_period; /* in events, or ns for time events; 0: takes none */
	uint64_t min_period;
	int time_based; /* counts nanoseconds: the period takes a time suffix */
	const char *help;
};

extern const struct cp_ev_desc cp_ev_table[];
extern const size_t cp_ev_table_len;
/* The runtime's own events come first in the table: rows [0, cp_ev_runtime_len). */
extern const size_t cp_ev_runtime_len;

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
	CP_EV_LOW_PERIOD = -5, /* a period below the event's min_period (err says why; ev is
				* filled, its period is the value given) */
};

/* Does the spec name an event of the catalog, a raw code or an encoded event? Parses
 * spec[0, len) into *ev; err (may be NULL) gets a message for CP_EV_BAD_PERIOD and
 * CP_EV_LOW_PERIOD (the CLI refuses both; the runtime raises a low timer period to the
 * minimum). ev->kind is set for every known name, whatever the period's fate. */
int cp_ev_parse(const char *spec, size_t len, struct cp_ev *ev, char *err, size_t errcap);
/* Parses only the @PERIOD part (text after '@') for an event already resolved. */
int cp_ev_parse_period(struct cp_ev *ev, const char *text, char *err, size_t errcap);
/* The encoded form of ev for CALLPATH_EVENTS. 0, or -1 if cap is too small. */
int cp_ev_encode(const struct cp_ev *ev, char *out, size_t cap);
/* The name an alias is measured under ("cpu-cycles", "PAPI_TOT_CYC" -> "cycles"); name
 * itself if it is none. cp_ev_parse names events by it. */
const char *cp_ev_canonical(const char *name);
/* Looks a name up in the catalog (aliases included). */
const struct cp_ev_desc *cp_ev_find(const char *name, size_t len);
/* The trigger families' wrappers are interposed only when asked for (a wrapper that is
 * not there costs nothing): the runtime is built once per set of families,
 * libcallpath-rt[-alloc][-io][-wait].so, and `callpath record` preloads the one its
 * events need. Bit i of a family set is the i-th CP_EV_TRIGGER row of the catalog
 * (alloc, io, wait: the runtime's CP_SYNC_* bits, core/sync.h). */
/* The bit of the family spec names (NAME[@PERIOD]), 0 if it is no family. */
unsigned cp_trigger_family_bit(const char *spec);
/* "libcallpath-rt[-FAMILY...].so" for a set of families. 0, or -1 if cap is too small. */
int cp_runtime_lib_name(unsigned families, char *out, size_t cap);
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
/* The runtime's own events (timers, trigger families) rather than perf_event's. */
static inline int cp_ev_kind_is_runtime(int kind)
{
	return kind == CP_EV_TIMER || kind == CP_EV_TRIGGER;
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
