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
