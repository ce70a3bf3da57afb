/* The event catalog (the runtime's own events, generic perf_event names), raw codes,
 * periods and the encoded form (see events.h). Linked into the preloaded runtime and run
 * at its configuration (never in a signal handler): no allocation, no stdio beyond
 * snprintf. */
#include "events/events.h"

#include <linux/perf_event.h>
#include <stdio.h>
#include <string.h>

#define RT(n, k, u, p, min, h)                                                                     \
	{                                                                                          \
		n, k, u, 0, 0, p, min, k == CP_EV_TIMER, h                                         \
	}
#define HW(n, c, p, min, h)                                                                        \
	{                                                                                          \
		n, CP_EV_HARDWARE, "events", PERF_TYPE_HARDWARE, PERF_COUNT_HW_##c, p, min, 0, h   \
	}
#define SW(n, c, p, min, t, h)                                                                     \
	{                                                                                          \
		n, CP_EV_SOFTWARE, t ? "ns" : "events", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_##c, p,  \
		    min, t, h                                                                      \
	}
#define CACHE(n, c, op, res, p, h)                                                                 \
	{                                                                                          \
		n, CP_EV_HARDWARE, "events", PERF_TYPE_HW_CACHE,                                   \
		    PERF_COUNT_HW_CACHE_##c | (PERF_COUNT_HW_CACHE_OP_##op << 8) |                 \
			(PERF_COUNT_HW_CACHE_RESULT_##res << 16),                                  \
		    p, 1000, 0, h                                                                  \
	}

/* Default periods are primes near round numbers (a period in step with a loop would
 * sample the same instruction every time). Hardware periods stay >= 1000: lower ones
 * make the kernel throttle the event. */
const struct cp_ev_desc cp_ev_table[] = {
    /* The runtime's own events (first: cp_ev_runtime_len rows). Timers: sample/; sources.c's
     * table lists exactly these (a unit test checks it). */
    RT("cputime", CP_EV_TIMER, "ns", 1000000, 10000,
       "CPU time of each thread (perf task-clock, hrtimer based; default 1ms = 1000 samples/s)"),
    RT("realtime", CP_EV_TIMER, "ns", 1000000, 10000,
       "wall-clock time of each thread, blocked or running (default 1ms)"),
    /* Synchronous trigger families (core/sync.c): no period, several metrics each. */
    RT("alloc", CP_EV_TRIGGER, "bytes", 0, 0,
       "memory allocation: alloc-bytes, alloc-calls, leak-bytes (live at exit) by context"),
    RT("io", CP_EV_TRIGGER, "bytes", 0, 0,
       "read/write/pread/pwrite/readv/writev/fread/fwrite: io-read-bytes, io-write-bytes, "
       "io-time (ns), io-calls"),
    RT("wait", CP_EV_TRIGGER, "ns", 0, 0,
       "time blocked in mutexes, condition variables, barriers, semaphores, joins: "
       "wait-time, wait-calls"),
    /* perf_event's generic names */
    HW("cycles", CPU_CYCLES, 2000003, 1000, "CPU cycles (hardware)"),
    HW("cpu-cycles", CPU_CYCLES, 2000003, 1000, "alias of cycles"),
    HW("instructions", INSTRUCTIONS, 2000003, 1000, "instructions retired (hardware)"),
    HW("cache-references", CACHE_REFERENCES, 100003, 1000, "last-level cache accesses (hardware)"),
    HW("cache-misses", CACHE_MISSES, 10007, 1000, "last-level cache misses (hardware)"),
    HW("branches", BRANCH_INSTRUCTIONS, 1000003, 1000, "branch instructions (hardware)"),
    HW("branch-instructions", BRANCH_INSTRUCTIONS, 1000003, 1000, "alias of branches"),
    HW("branch-misses", BRANCH_MISSES, 10007, 1000, "mispredicted branches (hardware)"),
    HW("bus-cycles", BUS_CYCLES, 1000003, 1000, "bus cycles (hardware)"),
    HW("ref-cycles", REF_CPU_CYCLES, 2000003, 1000,
       "reference cycles, unscaled by frequency changes (hardware)"),
    HW("stalled-cycles-frontend", STALLED_CYCLES_FRONTEND, 1000003, 1000,
       "cycles the front end delivered no instruction (hardware)"),
    HW("stalled-cycles-backend", STALLED_CYCLES_BACKEND, 1000003, 1000,
       "cycles the back end retired nothing (hardware)"),
    CACHE("L1-dcache-loads", L1D, READ, ACCESS, 1000003, "L1 data cache loads (hardware)"),
    CACHE("L1-dcache-load-misses", L1D, READ, MISS, 10007, "L1 data cache load misses (hardware)"),
    CACHE("L1-icache-load-misses", L1I, READ, MISS, 10007,
	  "L1 instruction cache misses (hardware)"),
    CACHE("LLC-loads", LL, READ, ACCESS, 100003, "last-level cache loads (hardware)"),
    CACHE("LLC-load-misses", LL, READ, MISS, 10007, "last-level cache load misses (hardware)"),
    CACHE("dTLB-load-misses", DTLB, READ, MISS, 10007, "data TLB load misses (hardware)"),
    CACHE("iTLB-load-misses", ITLB, READ, MISS, 10007, "instruction TLB misses (hardware)"),
    /* PAPI preset names, as aliases of the perf events closest to them (callpath does not
     * link PAPI; its other presets have no generic perf equivalent: name a PMU event). */
    HW("PAPI_TOT_CYC", CPU_CYCLES, 2000003, 1000, "PAPI preset: alias of cycles"),
    HW("PAPI_TOT_INS", INSTRUCTIONS, 2000003, 1000, "PAPI preset: alias of instructions"),
    HW("PAPI_BR_INS", BRANCH_INSTRUCTIONS, 1000003, 1000, "PAPI preset: alias of branches"),
    HW("PAPI_BR_MSP", BRANCH_MISSES, 10007, 1000, "PAPI preset: alias of branch-misses"),
    CACHE("PAPI_L1_DCM", L1D, READ, MISS, 10007, "PAPI preset: alias of L1-dcache-load-misses"),
    CACHE("PAPI_L1_ICM", L1I, READ, MISS, 10007, "PAPI preset: alias of L1-icache-load-misses"),
    CACHE("PAPI_L3_TCM", LL, READ, MISS, 10007, "PAPI preset: alias of LLC-load-misses"),
    CACHE("PAPI_TLB_DM", DTLB, READ, MISS, 10007, "PAPI preset: alias of dTLB-load-misses"),
    SW("cpu-clock", CPU_CLOCK, 1000000, 10000, 1,
       "CPU time by a per-thread hrtimer (ns; default 1ms)"),
    SW("task-clock", TASK_CLOCK, 1000000, 10000, 1, "CPU time of the task (ns; default 1ms)"),
    SW("page-faults", PAGE_FAULTS, 100, 1, 0, "page faults, minor and major (software)"),
    SW("faults", PAGE_FAULTS, 100, 1, 0, "alias of page-faults"),
    SW("minor-faults", PAGE_FAULTS_MIN, 100, 1, 0, "page faults served without I/O"),
    SW("major-faults", PAGE_FAULTS_MAJ, 1, 1, 0, "page faults that needed I/O"),
    SW("context-switches", CONTEXT_SWITCHES, 1, 1, 0,
       "the thread left the CPU (blocked or preempted)"),
    SW("cs", CONTEXT_SWITCHES, 1, 1, 0, "alias of context-switches"),
    SW("cpu-migrations", CPU_MIGRATIONS, 1, 1, 0, "the thread moved to another CPU"),
    SW("migrations", CPU_MIGRATIONS, 1, 1, 0, "alias of cpu-migrations"),
    SW("alignment-faults", ALIGNMENT_FAULTS, 1, 1, 0, "unaligned accesses fixed up"),
    SW("emulation-faults", EMULATION_FAULTS, 1, 1, 0, "instructions emulated by the kernel"),
};
const size_t cp_ev_table_len = sizeof cp_ev_table / sizeof cp_ev_table[0];
const size_t cp_ev_runtime_len = 5;

#define RAW_DEFAULT_PERIOD 1000003
#define PMU_DEFAULT_PERIOD 100003

/* Aliases are measured under their canonical name, so that the report's derived metrics
 * (IPC from cycles and instructions, miss ratios) find them whatever the user typed. */
static const char *const aliases[][2] = {
    {"cpu-cycles", "cycles"},
    {"branch-instructions", "branches"},
    {"faults", "page-faults"},
    {"cs", "context-switches"},
    {"migrations", "cpu-migrations"},
    {"PAPI_TOT_CYC", "cycles"},
    {"PAPI_TOT_INS", "instructions"},
    {"PAPI_BR_INS", "branches"},
    {"PAPI_BR_MSP", "branch-misses"},
    {"PAPI_L1_DCM", "L1-dcache-load-misses"},
    {"PAPI_L1_ICM", "L1-icache-load-misses"},
    {"PAPI_L3_TCM", "LLC-load-misses"},
    {"PAPI_TLB_DM", "dTLB-load-misses"},
};

const char *cp_ev_canonical(const char *name)
{
	for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++)
		if (!strcmp(aliases[i][0], name))
			return aliases[i][1];
	return name;
}

const struct cp_ev_desc *cp_ev_find(const char *name, size_t len)
{
	for (size_t i = 0; i < cp_ev_table_len; i++)
		if (strlen(cp_ev_table[i].name) == len && !strncmp(cp_ev_table[i].name, name, len))
			return &cp_ev_table[i];
	return NULL;
}

unsigned cp_trigger_family_bit(const char *spec)
{
	size_t len = strcspn(spec, "@");
	const struct cp_ev_desc *d = cp_ev_find(spec, len);
	unsigned bit = 1;
	for (size_t i = 0; d && d->kind == CP_EV_TRIGGER && i < cp_ev_runtime_len; i++) {
		if (&cp_ev_table[i] == d)
			return bit;
		bit <<= cp_ev_table[i].kind == CP_EV_TRIGGER;
	}
	return 0;
}

int cp_runtime_lib_name(unsigned families, char *out, size_t cap)
{
	size_t n = (size_t)snprintf(out, cap, "libcallpath-rt");
	unsigned bit = 1;
	for (size_t i = 0; i < cp_ev_runtime_len; i++) {
		if (cp_ev_table[i].kind != CP_EV_TRIGGER)
			continue;
		if (families & bit)
			n += (size_t)snprintf(n < cap ? out + n : NULL, n < cap ? cap - n : 0,
					      "-%s", cp_ev_table[i].name);
		bit <<= 1;
	}
	n += (size_t)snprintf(n < cap ? out + n : NULL, n < cap ? cap - n : 0, ".so");
	return n < cap ? 0 : -1;
}

static int parse_u64(const char **pp, int base, uint64_t *out)
{
	const char *p = *pp;
	uint64_t v = 0;
	int digits = 0;
	for (;; p++, digits++) {
		unsigned d;
		if (*p >= '0' && *p <= '9')
			d = (unsigned)(*p - '0');
		else if (base == 16 && *p >= 'a' && *p <= 'f')
			d = (unsigned)(*p - 'a' + 10);
		else if (base == 16 && *p >= 'A' && *p <= 'F')
			d = (unsigned)(*p - 'A' + 10);
		else
			break;
		if (v > (UINT64_MAX - d) / (uint64_t)base)
			return -1;
		v = v * (uint64_t)base + d;
	}
	if (!digits)
		return -1;
	*pp = p;
	*out = v;
	return 0;
}

static int bad_period(struct cp_ev *ev, const char *text, char *err, size_t cap)
{
	if (err) {
		if (ev->kind == CP_EV_TRIGGER)
			snprintf(err, cap,
				 "'%s' takes no period: it counts every call (remove '@%s')",
				 ev->name, text);
		else if (ev->kind == CP_EV_TIMER)
			snprintf(err, cap,
				 "bad period '%s' for %s: give a number of ns with an optional "
				 "ns/us/ms/s suffix, at least %llu ns (e.g. %s@500us)",
				 text, ev->name, (unsigned long long)ev->min_period, ev->name);
		else if (ev->time_based)
			snprintf(
			    err, cap,
			    "bad period '%s' for %s: give nanoseconds (a number with an "
			    "optional ns/us/ms/s suffix) of at least %llu, or fN for N samples "
			    "per second (e.g. %s@500us, %s@f1000)",
			    text, ev->name, (unsigned long long)ev->min_period, ev->name, ev->name);
		else
			snprintf(
			    err, cap,
			    "bad period '%s' for %s: give a count of events per sample of at "
			    "least %llu, or fN for N samples per second (e.g. %s@%llu, %s@f1000)",
			    text, ev->name, (unsigned long long)ev->min_period, ev->name,
			    (unsigned long long)(ev->min_period * 10), ev->name);
	}
	return CP_EV_BAD_PERIOD;
}

/* Highest frequency accepted here; the kernel's own limit (perf_event_max_sample_rate) is
 * checked when the CLI opens the event. */
#define CP_EV_MAX_FREQ 100000

int cp_ev_parse_period(struct cp_ev *ev, const char *text, char *err, size_t errcap)
{
	const char *p = text;
	uint64_t v, mul = 1;
	int freq = *p == 'f' && !cp_ev_kind_is_runtime(ev->kind);
	if (ev->kind == CP_EV_TRIGGER)
		return bad_period(ev, text, err, errcap);
	p += freq;
	if (parse_u64(&p, 10, &v))
		return bad_period(ev, text, err, errcap);
	if (!freq && ev->time_based) {
		if (!strcmp(p, "us"))
			mul = 1000, p += 2;
		else if (!strcmp(p, "ms"))
			mul = 1000000, p += 2;
		else if (!strcmp(p, "s"))
			mul = 1000000000, p += 1;
		else if (!strcmp(p, "ns"))
			p += 2;
	}
	if (*p || v > UINT64_MAX / mul)
		return bad_period(ev, text, err, errcap);
	v *= mul;
	if (freq && (v == 0 || v > CP_EV_MAX_FREQ))
		return bad_period(ev, text, err, errcap);
	ev->freq = freq;
	ev->period = v;
	if (!freq && v < ev->min_period) {
		bad_period(ev, text, err, errcap);
		return CP_EV_LOW_PERIOD;
	}
	return CP_EV_OK;
}

/* rNNNN (hex, as perf writes raw events). */
static int parse_raw(const char *name, size_t len, struct cp_ev *ev)
{
	if (len < 2 || name[0] != 'r')
		return CP_EV_UNKNOWN;
	const char *p = name + 1;
	uint64_t code;
	if (parse_u64(&p, 16, &code) || p != name + len)
		return CP_EV_UNKNOWN;
	ev->kind = CP_EV_RAW;
	ev->type = PERF_TYPE_RAW;
	ev->config = code;
	ev->period = RAW_DEFAULT_PERIOD;
	ev->min_period = 1000;
	return CP_EV_OK;
}

/* #TYPE.CONFIG.CONFIG1.CONFIG2 */
static int parse_encoding(const char *p, const char *end, struct cp_ev *ev)
{
	uint64_t f[4];
	for (int i = 0; i < 4; i++) {
		if (parse_u64(&p, 16, &f[i]) || (i < 3 ? *p != '.' : p != end))
			return CP_EV_BAD_SPEC;
		p++;
	}
	if (f[0] > UINT32_MAX)
		return CP_EV_BAD_SPEC;
	ev->type = (uint32_t)f[0];
	ev->config = f[1];
	ev->config1 = f[2];
	ev->config2 = f[3];
	ev->kind = ev->type == PERF_TYPE_SOFTWARE ? CP_EV_SOFTWARE : CP_EV_PMU;
	ev->time_based = ev->type == PERF_TYPE_SOFTWARE && (ev->config == PERF_COUNT_SW_CPU_CLOCK ||
							    ev->config == PERF_COUNT_SW_TASK_CLOCK);
	ev->min_period = ev->kind == CP_EV_SOFTWARE ? (ev->time_based ? 10000 : 1) : 1000;
	ev->period = PMU_DEFAULT_PERIOD;
	return CP_EV_OK;
}

int cp_ev_parse(const char *spec, size_t len, struct cp_ev *ev, char *err, size_t errcap)
{
	memset(ev, 0, sizeof *ev);
	const char *end = spec + len;
	const char *hash = memchr(spec, '#', len);
	if (hash)
		end = hash;
	const char *at = memchr(spec, '@', (size_t)(end - spec));
	size_t nlen = (size_t)((at ? at : end) - spec);
	if (!nlen || nlen >= sizeof ev->name)
		return CP_EV_BAD_SPEC;
	memcpy(ev->name, spec, nlen);
	int rc;
	const struct cp_ev_desc *d = cp_ev_find(spec, nlen);
	if (hash) {
		rc = parse_encoding(hash + 1, spec + len, ev);
	} else if (d) {
		const char *canon = cp_ev_canonical(ev->name);
		if (canon != ev->name)
			snprintf(ev->name, sizeof ev->name, "%s", canon);
		ev->kind = d->kind;
		ev->type = d->type;
		ev->config = d->config;
		ev->period = d->default_period;
		ev->min_period = d->min_period;
		ev->time_based = d->time_based;
		rc = CP_EV_OK;
	} else {
		rc = parse_raw(spec, nlen, ev);
	}
	if (rc)
		return rc;
	if (at) {
		char text[64];
		size_t tlen = (size_t)(end - at - 1);
		if (tlen >= sizeof text)
			return bad_period(ev, "(too long)", err, errcap);
		memcpy(text, at + 1, tlen);
		text[tlen] = 0;
		return cp_ev_parse_period(ev, text, err, errcap);
	}
	return CP_EV_OK;
}

int cp_ev_encode(const struct cp_ev *ev, char *out, size_t cap)
{
	int n = snprintf(out, cap, "%s@%s%llu#%x.%llx.%llx.%llx", ev->name, ev->freq ? "f" : "",
			 (unsigned long long)ev->period, ev->type, (unsigned long long)ev->config,
			 (unsigned long long)ev->config1, (unsigned long long)ev->config2);
	return n < 0 || (size_t)n >= cap ? -1 : 0;
}

void cp_ev_attr(const struct cp_ev *ev, int exclude_kernel, struct perf_event_attr *attr)
{
	memset(attr, 0, sizeof *attr);
	attr->size = sizeof *attr;
	attr->type = ev->type;
	attr->config = ev->config;
	attr->config1 = ev->config1;
	attr->config2 = ev->config2;
	attr->freq = ev->freq ? 1 : 0;
	attr->sample_period = ev->period; /* sample_freq shares the field */
	attr->read_format = CP_EV_READ_FORMAT;
	attr->disabled = 1;
	attr->exclude_kernel = exclude_kernel ? 1 : 0;
	attr->exclude_hv = 1;
	attr->wakeup_events = 1;
}
