/* The names the runtime knows for `-e EVENT[@PERIOD]`, header-only so that `callpath
 * record` can validate its options before starting the program (the CLI does not link
 * the runtime). sources.c's table must list exactly these names; a unit test checks it.
 *
 * Spec syntax (CALLPATH_EVENTS and -e): NAME[@PERIOD], comma-separated; PERIOD is a
 * number with an optional time suffix ns/us/ms/s (default ns) for time-based events. */
#ifndef CP_RUNTIME_CATALOG_H
#define CP_RUNTIME_CATALOG_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

struct cp_event_info {
	const char *name;
	const char *unit;
	uint64_t default_period;
	uint64_t min_period;
	const char *help;
};

static const struct cp_event_info cp_event_catalog[] = {
	{"cputime", "ns", 1000000, 10000,
	 "CPU time of each thread (perf task-clock, hrtimer based; default 1ms = 1000 samples/s)"},
	{"realtime", "ns", 1000000, 10000,
	 "wall-clock time of each thread, blocked or running (default 1ms)"},
	/* Synchronous trigger families (core/sync.c): no period, several metrics each. */
	{"alloc", "bytes", 0, 0,
	 "memory allocation: alloc-bytes, alloc-calls, leak-bytes (live at exit) by context"},
	{"io", "bytes", 0, 0,
	 "read/write/pread/pwrite/readv/writev/fread/fwrite: io-read-bytes, io-write-bytes, "
	 "io-time (ns), io-calls"},
	{"wait", "ns", 0, 0,
	 "time blocked in mutexes, condition variables, barriers, semaphores, joins: "
	 "wait-time, wait-calls"},
};
#define CP_EVENT_CATALOG_LEN (sizeof cp_event_catalog / sizeof cp_event_catalog[0])

static inline const struct cp_event_info *cp_event_lookup(const char *name, size_t len)
{
	for (size_t i = 0; i < CP_EVENT_CATALOG_LEN; i++)
		if (strlen(cp_event_catalog[i].name) == len &&
		    !strncmp(cp_event_catalog[i].name, name, len))
			return &cp_event_catalog[i];
	return NULL;
}

/* The trigger families, in the order of the runtime libraries' names. Their wrappers are
 * interposed only when asked for (a wrapper that is not there costs nothing): the runtime
 * is built once per set of families, libcallpath-rt[-alloc][-io][-wait].so, and `callpath
 * record` preloads the one its events need. Bit i of a family set is
 * cp_trigger_families[i] (the runtime's CP_SYNC_* bits, core/sync.h). */
static const char *const cp_trigger_families[] = {"alloc", "io", "wait"};
#define CP_TRIGGER_FAMILIES_LEN (sizeof cp_trigger_families / sizeof cp_trigger_families[0])

/* The bit of the family spec names (NAME[@PERIOD]), 0 if it is no family. */
static inline unsigned cp_trigger_family_bit(const char *spec)
{
	size_t len = strcspn(spec, "@");
	for (size_t i = 0; i < CP_TRIGGER_FAMILIES_LEN; i++)
		if (strlen(cp_trigger_families[i]) == len &&
		    !strncmp(cp_trigger_families[i], spec, len))
			return 1u << i;
	return 0;
}

/* "libcallpath-rt[-FAMILY...].so" for a set of families. 0, or -1 if cap is too small. */
static inline int cp_runtime_lib_name(unsigned families, char *out, size_t cap)
{
	size_t n = (size_t)snprintf(out, cap, "libcallpath-rt");
	for (size_t i = 0; i < CP_TRIGGER_FAMILIES_LEN; i++)
		if (families & (1u << i))
			n += (size_t)snprintf(n < cap ? out + n : NULL, n < cap ? cap - n : 0,
					      "-%s", cp_trigger_families[i]);
	n += (size_t)snprintf(n < cap ? out + n : NULL, n < cap ? cap - n : 0, ".so");
	return n < cap ? 0 : -1;
}

/* Parses "123", "250us", "2ms", "1s" into nanoseconds. 0 or -1. */
static inline int cp_event_parse_period(const char *s, uint64_t *out)
{
	uint64_t v = 0;
	const char *p = s;
	if (*p < '0' || *p > '9')
		return -1;
	for (; *p >= '0' && *p <= '9'; p++) {
		if (v > (UINT64_MAX - 9) / 10)
			return -1;
		v = v * 10 + (uint64_t)(*p - '0');
	}
	uint64_t mul = 1;
	if (!strcmp(p, "ns") || !*p)
		mul = 1;
	else if (!strcmp(p, "us"))
		mul = 1000;
	else if (!strcmp(p, "ms"))
		mul = 1000000;
	else if (!strcmp(p, "s"))
		mul = 1000000000;
	else
		return -1;
	if (v > UINT64_MAX / mul)
		return -1;
	*out = v * mul;
	return 0;
}

#endif
