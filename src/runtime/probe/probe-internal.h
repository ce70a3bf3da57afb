/* State shared by the probe runtime's files. */
#ifndef CP_RUNTIME_PROBE_INTERNAL_H
#define CP_RUNTIME_PROBE_INTERNAL_H

#include "runtime/core/runtime.h"
#include "runtime/probe/probe.h"

#include <stdint.h>

#define CP_PROBE_MAX_DEPTH 4096
#define CP_PROBE_CACHE 16384 /* context cache entries per thread (power of two) */
#define CP_PROBE_MAX 65536   /* probes per process */
#define CP_PROBE_MAX_PATTERNS 64

struct cp_probe_frame {
	uintptr_t *slot; /* the return-address slot of the probed call */
	uintptr_t real_ra;
	uint64_t t0;	    /* TSC when the probed code started */
	uint64_t child;	    /* TSC spent in probed callees */
	uint64_t cpu0;	    /* -m cputime: thread CPU ns when the probed code started */
	uint64_t cpu_child; /* and spent in probed callees */
	uint32_t ctx;	    /* the node of the call (the probed function's context) */
	uint32_t leaf;	    /* the probed function's PC node */
	uint8_t stale;	    /* node indices of another CCT (fork child): record nothing */
	uint8_t restored;   /* real return address written back (exception, backtrace) */
	uint8_t role;	    /* the probe's CP_PROBE_SELECT / CP_PROBE_FILTER bits */
	uint32_t probe;	    /* the probe's index (loop events find their function's frame) */
};

/* Loop probes (loop.c, loop-install.c): a loop of a probed function, and the events an
 * instrumented edge of the relocated function reports (cookie of its snippet). */
#define CP_LOOP_MAX 4096
#define CP_LOOP_EDGES 16384
#define CP_LOOP_EDGE_EVENTS 6
#define CP_LOOP_ACTIVE 64 /* open loop activations per thread */

enum { CP_LOOP_EV_ENTRY = 'e', CP_LOOP_EV_BACK = 'b', CP_LOOP_EV_EXIT = 'x' };

struct cp_loop_rt {
	uint32_t probe;	 /* the function's entry probe */
	uint32_t module; /* module id */
	uint64_t header; /* header address, ELF virtual address in the module */
};

struct cp_loop_edge_rt {
	uint32_t n;
	uint8_t kind[CP_LOOP_EDGE_EVENTS];  /* CP_LOOP_EV_* in order: exits, entries, backs */
	uint32_t loop[CP_LOOP_EDGE_EVENTS]; /* index in cp_probe_g.loops */
};

/* A relocated function, for mapping pcs in its copy back to the original (loop.c). */
#define CP_LOOP_RELOCS 256
#define CP_LOOP_MAP (1u << 18) /* instructions of all copies */
struct cp_loop_reloc {
	uint64_t copy, len, orig;
	uint32_t first, n; /* cp_probe_g.map_*[first .. first + n) (patch/relocate-fn.h) */
	uint64_t request;  /* hash of the loops request that made it (reused for the same) */
	uint32_t nloops, npoints;
};

struct cp_loop_act {
	uint32_t loop, depth, node;
	uintptr_t slot; /* the function's frame's return-address slot */
	uint64_t t0;
};

struct cp_probe_cache {
	uintptr_t ra; /* 0: empty */
	uint64_t where;
	uint32_t parent, probe, ctx, leaf;
};

struct cp_probe_thread {
	uint32_t depth;
	uint32_t selects, filters; /* active frames of select / filter probes */
	uint64_t too_deep;
	uint32_t nacts; /* open loop activations (loop.c) */
	/* context_walk (probe.c): the parent frame's slot, where cp_probe_real_ra ends the
	 * unwind (walk_hit set), so that it walks only the frames below the parent. */
	uintptr_t walk_stop;
	int walk_hit;
	struct cp_loop_act acts[CP_LOOP_ACTIVE];
	struct cp_probe_frame stack[CP_PROBE_MAX_DEPTH];
	struct cp_probe_cache cache[CP_PROBE_CACHE];
};

struct cp_probe_global {
	int enabled;
	uint32_t calls_metric, time_metric;
	int cputime; /* CALLPATH_PROBE_METRICS has cputime: probe-cputime metric */
	uint32_t cpu_metric;
	uint64_t tsc_hz;
	uint64_t ns_mult; /* ns = cycles * ns_mult >> 32 */
	uint32_t npatterns;
	int has_select;
	volatile int paused;		       /* fork child until its thread state is rebuilt */
	char *patterns[CP_PROBE_MAX_PATTERNS]; /* "glob" or "module-glob:glob" */
	struct cp_probe *probes;	       /* CP_PROBE_MAX, mmap'd */
	uint32_t nprobes;
	uint32_t modules_seen; /* registry slots already scanned */
	uint32_t refused[CP_PATCH_NSTATUS];
	/* Loop probes (CALLPATH_LOOPS=1): metrics loop-iterations, loop-entries, loop-time. */
	int loops_enabled;
	uint32_t iter_metric, entry_metric, ltime_metric;
	struct cp_loop_rt *loops; /* CP_LOOP_MAX, mmap'd */
	uint32_t nloops;
	struct cp_loop_edge_rt *edges; /* CP_LOOP_EDGES, mmap'd */
	uint32_t nedges;
	struct cp_loop_reloc relocs[CP_LOOP_RELOCS];
	uint32_t nrelocs; /* published (release) after the entry is complete */
	uint32_t *map_at, *map_orig, *map_info; /* CP_LOOP_MAP each, mmap'd */
	uint32_t nmap;
};

/* loop.c: a pc in a relocated copy -> the same place in the original (is_return: pc is a
 * return address); pc itself when it is in no copy; a snippet's pc -> its edge's
 * instruction, with *sp_adj the bytes its pushes moved rsp; 0 where no original place
 * exists. AS-safe (cp_unwind_set_pc_map). */
uintptr_t cp_loop_map_pc(uintptr_t pc, int is_return, uintptr_t *sp_adj) CP_HIDDEN;

extern struct cp_probe_global cp_probe_g CP_HIDDEN;

void cp_probe_restore_returns(void) CP_HIDDEN;
void cp_probe_lock(void) CP_HIDDEN;
void cp_probe_unlock(void) CP_HIDDEN;
int cp_probe_loops_config(void) CP_HIDDEN; /* loop-install.c: the loop tables */
void cp_probe_rearm_returns(void) CP_HIDDEN;

#endif
