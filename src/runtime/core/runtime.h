/* The runtime's process-wide and per-thread state (internal to libcallpath-rt.so).
 *
 * Module core/ (public: runtime.h, sync.h, fds.h; sync-internal.h private) drives the
 * others: configuration, start and end, threads, the signal handler. Its code is above
 * cct/, unwind/, sample/ and probe/; this header and fds.h are the shared state every
 * module may include (layering: docs/internals/runtime.md, checked by the e2e test
 * runtime-layering). */
#ifndef CP_RUNTIME_RUNTIME_H
#define CP_RUNTIME_RUNTIME_H

#include "format/measure.h"
#include "runtime/cct/cct.h"
#include "runtime/core/sync.h"
#include "runtime/sample/source.h"
#include "runtime/unwind/unwind.h"

#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>

#define CP_HIDDEN __attribute__((visibility("hidden")))
#define CP_EXPORT __attribute__((visibility("default")))

#define CP_MAX_THREADS 8192
#define CP_MAX_FRAMES 512
/* Threads the task scan can adopt (not started through pthread_create). */
#define CP_MAX_ADOPTED 256
/* Default sampling signal: a real-time signal programs rarely use (SIGPROF and SIGALRM
 * belong to programs and to other profilers). CALLPATH_SIGNAL=N overrides it. */
#define CP_DEFAULT_SIGNAL_OFFSET 6 /* SIGRTMIN + 6 */

/* The previous sample's path, outermost frame first: a new sample reuses the nodes of the
 * common prefix without hashing or module lookups (consecutive samples share most of their
 * stack). Invalid when the module registry changed (cp_rt.modules_gen). */
struct cp_probe_thread;
struct cp_omp_ctx;
struct cp_omp_thread;

struct cp_path_cache {
	uint64_t modules_gen;
	uint32_t n;    /* valid entries */
	uint32_t root; /* 0, or the PARTIAL node the path hangs under */
	uintptr_t pc[CP_MAX_FRAMES];
	uint32_t node[CP_MAX_FRAMES]; /* node after this frame (a skipped frame repeats it) */
	uint8_t kind[CP_MAX_FRAMES];
};

struct cp_thread {
	struct cp_cct cct;
	struct cp_path_cache path;
	/* The sample being unwound: here rather than on the interrupted thread's stack (8 KiB
	 * would overflow small thread stacks); safe because a nested sample is dropped. */
	struct cp_frame frames[CP_MAX_FRAMES];
	struct cp_source_thread src[CP_MF_MAX_METRICS];
	/* Synchronous triggers (core/sync.c): their own unwind buffer and path cache, so that
	 * they never share the sampling handler's (a sample may land between two calls). */
	struct cp_path_cache sync_path;
	struct cp_frame sync_frames[CP_MAX_FRAMES];
	struct cp_sync_cache sync_cache;
	volatile int busy;	  /* inside the runtime: a sample landing now is dropped */
	volatile int stopped;	  /* sampling ended for this thread */
	uint64_t our_signals;	  /* sampling signals taken (sleep wrappers compare it) */
	uint64_t foreign_signals; /* deliveries of our signal number that were not ours */
	int32_t tid;
	uint32_t tidx;
	uint64_t cpu_start_ns;	       /* thread CPU clock when measuring began (exec keeps it) */
	uint32_t slot;		       /* index in the registry */
	int lazy;		       /* first seen in a signal handler */
	int adopted;		       /* found by the task scan; set up by another thread */
	int armed;		       /* adopted: its sources started (atomic) */
	int app_blocked;	       /* the program asked our signal to be blocked */
	int packed;		       /* the file is packed into the process file and unlinked */
	struct cp_probe_thread *probe; /* entry/exit probes' shadow stack (probe/probe.c) */
	/* OpenMP (omp/omp.h): the region whose outlined function the thread runs now, and
	 * the records of the regions it started (mapped at its first region). */
	const struct cp_omp_ctx *volatile omp_cur;
	struct cp_omp_thread *omp;
	/* the region whose outlined function the thread ran last, at generation gen (libgomp:
	 * until the region ends, the thread waits in its end barrier) */
	const struct cp_omp_ctx *volatile omp_after;
	uint32_t omp_after_gen;
	/* a pool thread: it ran a region another thread started (omp-idle: its samples in the
	 * runtime outside any region hang under the master's serial context) */
	uint32_t omp_worker;
};

struct cp_runtime {
	volatile int active;  /* configured and initialised */
	volatile int enabled; /* sampling (cleared on failure, at exit, by callpath_stop) */
	int signo;
	int follow_exec;
	int no_perf;		     /* CALLPATH_NO_PERF=1: use the POSIX-timer fallbacks */
	int show_runtime;	     /* CALLPATH_SHOW_RUNTIME=1: keep our frames in paths */
	uintptr_t self_lo, self_len; /* the runtime's own text (core/init.c) */
	int no_pack;		     /* CALLPATH_PACK=0: thread files stay (trimmed), not packed */
	int32_t pid;
	int32_t ppid; /* parent: the forking process for a fork child (even if it exited) */
	uint32_t gen;
	/* MPI rank in MPI_COMM_WORLD (CP_MF_NO_RANK: none) and the number of ranks, from the
	 * launcher's environment at start (core/config.c), confirmed by MPI_Init (core/mpi.c). */
	int32_t rank;
	uint32_t nranks;
	char outdir[PATH_MAX];
	uint32_t nmetrics;
	struct cp_metric metrics[CP_MF_MAX_METRICS];
	/* The process file. Appends only outside signal context, under proc_lock. */
	struct cp_arena proc;
	struct cp_mf_process *phdr;
	pthread_mutex_t proc_lock;
	uint32_t next_tidx;
	uint64_t cpu_start_ns;	       /* process CPU clock when this image's measurement began */
	uint64_t cpu_armed_ns;	       /*   when its start was done (sampling armed) */
	uint64_t cpu_fini_ns;	       /*   when its end began (cp_rt_fini) */
	uint64_t dropped_nothread;     /* samples on threads that have no state */
	uint64_t orphan_events;	       /* perf events no state held, disabled (core/signal.c) */
	uint32_t threads_unmeasured;   /* threads whose state or file could not be created */
	uint32_t sources_unarmed;      /* (thread, metric) pairs whose source failed to start */
	volatile uint64_t modules_gen; /* bumped after each registry change (path caches) */
	volatile int note_pending;     /* a failure in signal context awaits its NOTE */
	const char *failure;	       /* static text of that failure */
	/* Registry of live threads. Entries are added lock-free (CAS, AS-safe); removing one
	 * (thread end, which unmaps it) and walking them (exit) hold threads_lock. */
	pthread_mutex_t threads_lock;
	struct cp_thread *volatile threads[CP_MAX_THREADS];
	/* tid of each registry slot (0 = free): what the task scan reads, never the blocks. */
	volatile int32_t tids[CP_MAX_THREADS];
	volatile uint32_t tids_hw; /* slots [tids_hw, CP_MAX_THREADS) were never used */
	/* Threads adopted by the task scan (core/adopt.c), found by tid in the handler. */
	struct cp_thread *volatile adopted[CP_MAX_ADOPTED];
	volatile uint32_t nadopted;
	volatile int32_t control_tid; /* the control channel's thread (core/control.c), 0 */
	int scan_timer;		      /* kernel id of the process-CPU timer that triggers scans */
	int scan_timer_valid;
	int exit_status;
	int exit_status_known;
	int finished;
};

extern struct cp_runtime cp_rt CP_HIDDEN;
extern __thread struct cp_thread *cp_self CP_HIDDEN;

/* Is pc in the runtime's own code? For a return address (is_return) the call is what
 * counts, so the byte before it is tested. */
static inline int cp_rt_owns_pc(uintptr_t pc, int is_return)
{
	return pc - is_return - cp_rt.self_lo < cp_rt.self_len;
}

/* Frames of the runtime (its wrappers, main's and the threads' start trampolines, the
 * handler that chains to the program's) are left out of every path, so that their cost
 * goes to the program's function that called into the runtime; CALLPATH_SHOW_RUNTIME=1
 * (`record --show-runtime`) keeps them for debugging. AS-safe. */
static inline int cp_rt_hides_frame(uintptr_t pc, int is_return)
{
	return !cp_rt.show_runtime && cp_rt_owns_pc(pc, is_return);
}

/* core/init.c */
void cp_rt_init(void) CP_HIDDEN;
int cp_rt_start(int attached) CP_HIDDEN; /* after cp_config_load: 0, or -1 (off) */
/* CALLPATH_* settings: the environment, or an attached runtime's file (core/attach.c). */
const char *cp_rt_getenv(const char *name) CP_HIDDEN;
int cp_rt_attached(void) CP_HIDDEN; /* loaded by attach --inject */
void cp_rt_fini(int crashed_sig) CP_HIDDEN;
/* True in a vfork child, a raw clone child or a fork child made inside libc (daemon(),
 * _Fork): it shares or copied the parent's measurement state and must not touch it, only
 * exec or exit. Async-signal-safe. */
int cp_rt_foreign_child(void) CP_HIDDEN;
void cp_rt_after_fork_child(void) CP_HIDDEN;
/* Marks the image as ended by exec (files finished) / resumes if the exec failed. */
void cp_rt_before_exec(void) CP_HIDDEN;
void cp_rt_exec_failed(void) CP_HIDDEN;
/* Disables sampling after an internal failure; `why` must be a static string. AS-safe. */
void cp_rt_fail(const char *why) CP_HIDDEN;

/* writer/procfile.c: outside signal context only. */
int cp_proc_create(void) CP_HIDDEN;
void cp_proc_record(uint32_t type, const void *payload, uint32_t len) CP_HIDDEN;
void cp_rt_note(const char *fmt, ...) CP_HIDDEN __attribute__((format(printf, 1, 2)));
void cp_proc_finish(int crashed_sig) CP_HIDDEN;
void cp_proc_write_cmdline(void) CP_HIDDEN;
void cp_proc_flush_pending_note(void) CP_HIDDEN;
/* Packing (format/measure.h): appends a thread file's contents [0, used) as a THREAD
 * record, FINISHED in the copy. 0, or -1 (too large, no room: the file stays). */
#define CP_PACK_MAX (64ul << 20)
int cp_proc_pack(const struct cp_mf_thread *th) CP_HIDDEN;
/* Thread tidx goes on in its re-created file (after a failed exec). */
void cp_proc_unpack(uint32_t tidx) CP_HIDDEN;
/* Image end: the process file shrinks to its contents (it grows again if written). */
void cp_proc_trim(void) CP_HIDDEN;
/* The header's cpu_end_ns and runtime_ns, now (at image end; AS-safe). */
void cp_proc_cpu_end(void) CP_HIDDEN;

/* core/control.c: the control channel (CALLPATH_CONTROL=1): its FIFO and thread at
 * process start; at image end the FIFO is removed unless exec (same pid) reuses it; a
 * fork child closes the inherited descriptor and starts its own channel (its pid's FIFO). */
void cp_control_start(void) CP_HIDDEN;
void cp_control_stop(int exec) CP_HIDDEN;
void cp_control_after_fork(void) CP_HIDDEN;

/* core/startup.c: the CPU the image used before the runtime started, into the header
 * and, for CPU-time metrics, onto the dynamic loader's entry in t's tree. */
void cp_startup_charge(struct cp_thread *t) CP_HIDDEN;

/* core/thread.c */
struct cp_thread *cp_thread_begin(int lazy) CP_HIDDEN;	       /* AS-safe */
struct cp_thread *cp_thread_adopt(pid_t tid) CP_HIDDEN;	       /* AS-safe */
struct cp_thread *cp_thread_find_adopted(pid_t tid) CP_HIDDEN; /* AS-safe */

/* core/adopt.c: threads the runtime did not see start. */
#define CP_SCAN_MAGIC (CP_TIMER_MAGIC | 0xff) /* sival_int of the scan timer */
/* sival_int of the signal an attached runtime sends a thread it adopted, so that the thread
 * points its own TLS (cp_self) at its state: probes and triggers find it there. */
#define CP_TLS_MAGIC (CP_TIMER_MAGIC | 0xfe)
void cp_adopt_start(void) CP_HIDDEN;	     /* process start / fork child: scan, arm the timer */
void cp_adopt_stop(void) CP_HIDDEN;	     /* fini: disarm the timer */
void cp_adopt_scan(int immediate) CP_HIDDEN; /* AS-safe */
void cp_thread_end(struct cp_thread *t, int finished) CP_HIDDEN;
void cp_thread_sources_stop(struct cp_thread *t) CP_HIDDEN;
void cp_thread_header_finish(struct cp_thread *t, uint64_t cpu_ns) CP_HIDDEN;
void cp_thread_finish_all(void) CP_HIDDEN; /* process exit: every thread's header */
void cp_thread_drop_all(void) CP_HIDDEN;
void cp_thread_forget_all_but_self(void) CP_HIDDEN; /* fork child */
/* Image end (exit, exec): every thread's file packed into the process file and unlinked;
 * the mappings stay (a late sample lands in memory no one reads). */
void cp_thread_pack_all(void) CP_HIDDEN;
/* After a failed exec: the calling thread's file back on disk (it goes on sampling). */
void cp_thread_unpack_self(void) CP_HIDDEN;

/* core/signal.c */
int cp_signal_install(void) CP_HIDDEN;
void cp_signal_fatal_install(void) CP_HIDDEN;
int cp_signal_is_fatal_handler(const struct sigaction *sa) CP_HIDDEN;
int cp_signal_real_sigaction(int sig, const struct sigaction *act, struct sigaction *old) CP_HIDDEN;
/* Installs fn for sig (SA_SIGINFO | flags; mask NULL: none blocked) with the real
 * sigaction, the previous action in *old (if old): its result. */
int cp_signal_handler_install(int sig, void (*fn)(int, siginfo_t *, void *), int flags,
			      const sigset_t *mask, struct sigaction *old) CP_HIDDEN;
/* Runs the program's action a for a signal it handles: 1, or 0 when a is SIG_DFL or
 * SIG_IGN (nothing ran; the caller decides). AS-safe. */
int cp_signal_chain(const struct sigaction *a, int sig, siginfo_t *si, void *ucv) CP_HIDDEN;
/* Restores sig's default action and raises it again on this thread. AS-safe. */
void cp_signal_default_action(int sig) CP_HIDDEN;

/* core/livepatch.c: probes written while threads run (src/patch/poke.c). */
#define CP_PCQ_MAGIC (CP_TIMER_MAGIC | 0xfd) /* sival_int of a pc query (not CP_TLS_MAGIC) */
_Static_assert(CP_PCQ_MAGIC != CP_TLS_MAGIC && CP_PCQ_MAGIC != CP_SCAN_MAGIC,
	       "each queued signal of the runtime has its own sival_int");
void cp_livepatch_install(void) CP_HIDDEN; /* init, probes on: the SIGTRAP handler */
int cp_livepatch_answer(const siginfo_t *si, void *uc) CP_HIDDEN; /* AS-safe: 1 if a query */
/* The program's sigaction on SIGTRAP once ours is installed: 1 when handled (stored as the
 * action ours chains to). */
int cp_livepatch_sigaction(int sig, const struct sigaction *act, struct sigaction *old) CP_HIDDEN;
/* The program's view of our signal (interpose/signals.c stores it). */
extern struct sigaction cp_app_action CP_HIDDEN;
extern volatile int cp_app_action_set CP_HIDDEN;

/* core/config.c */
int cp_config_load(int rearm) CP_HIDDEN;
/* LD_PRELOAD and CALLPATH_* as they were at start (KEY=VALUE, NULL-terminated), so that a
 * program that clears its environment (env -i) still passes them on to exec'd images. */
extern char *cp_saved_env[] CP_HIDDEN;

/* core/signal.c: inserts a path of frames (leaf first) into t's CCT through the path
 * cache pc (t->path for samples, t->sync_path for synchronous triggers); the leaf node. */
uint32_t cp_path_insert(struct cp_thread *t, struct cp_path_cache *pc,
			const struct cp_frame *frames, int n,
			enum cp_unwind_status status) CP_HIDDEN;
/* interpose/process.c: registers the fork handlers (pthread_atfork) at init. */
void cp_fork_hooks_install(void) CP_HIDDEN;
/* interpose/dl.c: fork() keeps the module registry's lock consistent. */
void cp_dl_fork_prepare(void) CP_HIDDEN;
void cp_dl_fork_parent(void) CP_HIDDEN;
void cp_dl_fork_child(void) CP_HIDDEN;

/* interpose/real.c: the next definitions of the functions we interpose. */
void cp_real_init(void) CP_HIDDEN;

#endif
