/* Synchronous samples: a value counted at a call the program makes (bytes allocated, bytes
 * read, nanoseconds blocked), attributed to the full calling context of that call.
 *
 * The trigger families (`-e alloc`, `-e io`, `-e wait`) live in interpose/{alloc,io,wait}.c
 * and each adds several metrics (CP_MF_SRC_SYNC, CP_MF_MECH_INTERPOSE) at configuration.
 * Other runtime code (probes) may record through cp_sync_record with its own metrics.
 *
 * cp_sync_record(ra, values, n, where), called from an interposed function with
 * ra = __builtin_return_address(0) of that function:
 *   - unwinds the calling thread from its own frame (cp_unwind_here), drops the runtime's
 *     frames up to the frame whose return address is `ra` (the call site in the program:
 *     the leaf node is that CALL node), drops the runtime's other frames as the sampling
 *     handler does;
 *   - inserts the path into the thread's CCT (its own path cache: consecutive calls from
 *     the same context compare frames only, no hashing, no module lookup);
 *   - adds values[i].value to metric values[i].metric (index in cp_rt.metrics) of the leaf
 *     and counts one event per metric in the thread header's samples[].
 * It runs with the thread's busy flag set: a sampling signal landing meanwhile is dropped
 * and counted (never corrupts the CCT); a nested call (a signal handler of the program
 * calling malloc while we record) is not recorded (counted, NOTE at exit).
 * It records nothing (returns 0) when: the runtime is off or stopped (callpath_stop), the
 * thread has no state (not started through pthread_create and not adopted yet), the
 * thread is busy, `ra` lies in the runtime itself (its own allocations), or the process is
 * a fork child made without our fork handlers (a wipe-on-fork page tells).
 * Not async-signal-safe in general (the program's handlers may call it: then it is, since
 * it takes no locks and allocates with mmap only, but it is not meant for our handler).
 * Cost: one unwind (cached CFI recipes) + a path compare; see bench/triggers. */
#ifndef CP_RUNTIME_SYNC_H
#define CP_RUNTIME_SYNC_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

/* Families, bits of cp_sync_on (the order of the trigger families in the event catalog,
 * events/events.h). */
enum {
	CP_SYNC_ALLOC = 1u << 0,
	CP_SYNC_IO = 1u << 1,
	CP_SYNC_WAIT = 1u << 2,
	CP_SYNC_MPI = 1u << 3, /* wrappers in libcallpath-mpi.so, through core/mpi.c */
};

/* The families' metrics (positions in cp_sync_metric[]). */
enum cp_sync_id {
	CP_SM_ALLOC_BYTES,
	CP_SM_ALLOC_CALLS,
	CP_SM_LEAK_BYTES,
	CP_SM_IO_READ_BYTES,
	CP_SM_IO_WRITE_BYTES,
	CP_SM_IO_TIME,
	CP_SM_IO_CALLS,
	CP_SM_WAIT_TIME,
	CP_SM_WAIT_CALLS,
	CP_SM_MPI_TIME, /* the order of enum callpath_mpi_value (core/mpi.h) */
	CP_SM_MPI_CALLS,
	CP_SM_MPI_SENT_BYTES,
	CP_SM_MPI_RECV_BYTES,
	CP_SM_MPI_SENT_MSGS,
	CP_SM_MPI_RECV_MSGS,
	CP_SM_COUNT,
};

/* Families recording now (0 until the runtime started, and after exit): the one branch an
 * interposed function takes when its family is off. */
extern volatile uint32_t cp_sync_on __attribute__((visibility("hidden")));
/* cp_rt.metrics index of each CP_SM_* metric (valid when its family is on). */
extern uint32_t cp_sync_metric[CP_SM_COUNT] __attribute__((visibility("hidden")));

#define CP_SYNC_ENABLED(fam) __builtin_expect((cp_sync_on & (fam)) != 0, 0)

struct cp_sync_value {
	uint32_t metric; /* index in cp_rt.metrics */
	uint64_t value;
};

/* Where a value was recorded: the leaf node in the CCT of thread tidx (this image). */
struct cp_sync_where {
	uint32_t node;
	uint32_t tidx;
};

/* See above. 1 if recorded (and *where set when where != NULL), 0 if not. */
int cp_sync_record_at(const void *ra, const void *cfa, const void *caller_fp,
		      const struct cp_sync_value *v, unsigned n, struct cp_sync_where *where)
    __attribute__((visibility("hidden")));
/* As cp_sync_record_at, with the values on a kind-2 (PC) node at `callee` (the entry of
 * the called function, e.g. a wrapper of MPI_Recv in another library) below the call
 * site's node: the path ends in the function called, as a probe's does. callee 0: the
 * call site's node. obj (or NULL): a wait on that object, at the call site's node. */
struct cp_sync_object;
int cp_sync_record_callee(const void *ra, const void *cfa, const void *caller_fp, uintptr_t callee,
			  const struct cp_sync_value *v, unsigned n,
			  const struct cp_sync_object *obj) __attribute__((visibility("hidden")));
/* In an interposed function: its return address, its CFA (the caller's stack pointer at
 * the call) and the caller's rbp at the call (the function's frame pointer is forced by
 * __builtin_frame_address, so the caller's rbp is the word it points at). */
#define CP_SYNC_SITE()                                                                             \
	__builtin_return_address(0), __builtin_dwarf_cfa(),                                        \
	    (*(void *const *)__builtin_frame_address(0))
static inline int cp_sync_record(const void *ra, const struct cp_sync_value *v, unsigned n,
				 struct cp_sync_where *where)
{
	return cp_sync_record_at(ra, NULL, NULL, v, n, where);
}

/* Shorthand for the families: values by CP_SM_* id (inlined: every frame between the
 * interposed function and cp_sync_record_at is one more unwind step). */
static inline __attribute__((always_inline)) int
cp_sync_record_ids(const void *ra, const void *cfa, const void *fp, const enum cp_sync_id *ids,
		   const uint64_t *values, unsigned n, struct cp_sync_where *where)
{
	struct cp_sync_value v[4];
	if (n > 4)
		n = 4;
	for (unsigned i = 0; i < n; i++) {
		v[i].metric = cp_sync_metric[ids[i]];
		v[i].value = values[i];
	}
	return cp_sync_record_at(ra, cfa, fp, v, n, where);
}

/* The context cache (cp_sync_record_at with cfa != NULL: CP_SYNC_SITE()). A thread's
 * entry maps (ra, cfa, caller's rbp, module generation) to the leaf node, with the stack
 * words the unwind depends on: the return-address slot of every frame and the slots rbp
 * is restored from. At the second miss of a key, the path the unwinder found is walked
 * again by the CFI rules alone (cp_cfi_find_row per frame), with CFA = rsp + constant or
 * rbp + constant and rbp tracked through its save slots; the entry is made only if that
 * walk reproduces the unwinder's frames exactly and ends at an outermost frame. The walk
 * is a function of (cfa, rbp, the slots), so equal slots prove an equal path: a hit can
 * never attribute to a wrong context. Not cached (full unwind each time): CFAs based on
 * other registers or dereferenced (realigned stacks), signal frames, unwinds that stop
 * early, paths deeper than the slots hold. */
#define CP_SYNC_CACHE_WAYS 64
#define CP_SYNC_CACHE_FRAMES 64 /* validated slots: return addresses and saved rbp */
struct cp_sync_cache_entry {
	uintptr_t ra, cfa, fp;
	uint64_t modules_gen;
	uint32_t leaf;
	uint16_t nslots; /* validated slots */
	uint16_t nframes;
	uint16_t pad[3];
	uint16_t state;			    /* 0 empty, 1 seen once, 2 valid */
	uint32_t off[CP_SYNC_CACHE_FRAMES]; /* slot address - cfa */
	uintptr_t val[CP_SYNC_CACHE_FRAMES];
};
struct cp_sync_cache {
	struct cp_sync_cache_entry e[CP_SYNC_CACHE_WAYS];
	uint64_t hits, misses;
};

static inline uint64_t cp_sync_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Configuration (core/config.c): is NAME (len bytes) a trigger family? If so, adds its
 * metrics to cp_rt.metrics and returns 1; 0 if it is no family; -1 if the metrics do not
 * fit (CP_MF_MAX_METRICS) or a period was given (has_period). */
int cp_sync_config_family(const char *name, size_t len, int has_period)
    __attribute__((visibility("hidden")));
/* Is NAME a trigger family (for the catalog test)? */
int cp_sync_is_family(const char *name, size_t len) __attribute__((visibility("hidden")));

/* Lifecycle (core/init.c): start recording once the first thread is measured; in a fork
 * child (our handler) after its thread began; at exit before the headers are finished
 * (leaks are attributed, caller holds threads_lock; crashed: only stop). */
void cp_sync_start(void) __attribute__((visibility("hidden")));
void cp_sync_after_fork_child(void) __attribute__((visibility("hidden")));
void cp_sync_fini(int crashed) __attribute__((visibility("hidden")));
void cp_sync_notes(void) __attribute__((visibility("hidden"))); /* outside locks */

/* -e wait: a wait that began at t0 (cp_sync_now_ns) and ended now, by the call returning
 * to ra, on the synchronization object at `object` (enum cp_mf_sync_kind `kind`):
 * wait-time and wait-calls on the call's context, and the wait in the thread's
 * sync-object table (format/measure.h). Keeps errno. */
struct cp_sync_object {
	uint64_t object;
	uint64_t aux; /* cp_mf_sync_obj.aux */
	uint64_t ns;  /* the wait's time */
	uint16_t kind;
};
void cp_wait_record(const void *ra, uint64_t t0, const void *object, unsigned kind)
    __attribute__((visibility("hidden")));
/* Slots of each thread file's sync-object table: CP_SYNC_OBJECT_SLOTS when -e wait or the
 * MPI wrappers' family is configured, else 0 (no table). 256 slots of 40 bytes: 10 KB per thread
 * file; up to 192 distinct (object, call site) per thread, the rest counted as lost. */
#define CP_SYNC_OBJECT_SLOTS 256u
uint32_t cp_sync_object_slots(void) __attribute__((visibility("hidden")));

/* Defined by interpose/{alloc,io,wait}.c: a family can be measured only by a runtime
 * library built with its wrappers (cp_runtime_lib_name, events/events.h); weak, so a
 * missing one reads as NULL. */
#define CP_SYNC_LINKED_DECL __attribute__((visibility("hidden"), weak))
extern const int cp_sync_linked_alloc CP_SYNC_LINKED_DECL;
extern const int cp_sync_linked_io CP_SYNC_LINKED_DECL;
extern const int cp_sync_linked_wait CP_SYNC_LINKED_DECL;
extern const int cp_sync_linked_mpi CP_SYNC_LINKED_DECL; /* core/mpi.c: always */

/* interpose/alloc.c (weak references: the unit tests link the runtime statically with
 * their own malloc, so nothing may pull alloc.o in): live allocations by context (side table),
 * attributed at exit. */
#define CP_ALLOC_DECL __attribute__((visibility("hidden"), weak))
void cp_alloc_start(void) CP_ALLOC_DECL;
void cp_alloc_fork_child(void) CP_ALLOC_DECL;
void cp_alloc_attribute_leaks(void) CP_ALLOC_DECL;
void cp_alloc_notes(void) CP_ALLOC_DECL;

#endif
