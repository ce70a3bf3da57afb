/* The measurement files: the contract between the runtime (writer) and the tools (reader).
 * Documented for users in docs/format.md ("Measurement directory"); keep both in step and
 * bump CP_MF_VERSION on any incompatible change.
 *
 * A measurement directory holds, per process image (a process, a fork child, each image
 * after exec):
 *     <pid>.<gen>.proc            the process file: metrics, load modules, notes
 *     <pid>.<gen>.<tidx>.thr      one thread file per live thread (tidx 0 = first thread seen)
 * <gen> is the smallest integer making the process file name new (O_CREAT|O_EXCL), so an
 * exec'd image (same pid) or a recycled pid never overwrites an earlier one.
 *
 * Packing (version 2): when a thread ends, and for every thread when its image ends
 * normally (exit or exec), the runtime appends the thread file's complete contents to the
 * process file as a THREAD record, then unlinks the thread file. A run of many processes or
 * short threads therefore leaves one file per process image. Which copy of thread tidx is
 * valid: the last THREAD or UNPACK record naming tidx in the process file decides. THREAD:
 * that record is the thread's data, a file <pid>.<gen>.<tidx>.thr still present is a
 * leftover of packing (the process was killed between append and unlink) and is ignored.
 * UNPACK (written when an exec failed and the thread goes on in its re-created file), or no
 * record: the thread file is the data.
 *
 * Every file is the runtime's arena: a file-backed MAP_SHARED mapping, grown with
 * ftruncate ahead of use. The writer fills a record completely, then publishes it by
 * storing `used` with release ordering; a reader loads `used` with acquire ordering and
 * reads only [0, used). A file of a program killed with SIGKILL is therefore valid up
 * to `used`; `flags & CP_MF_FINISHED` says the program ended normally.
 * All integers are little-endian (x86-64 native); structures are naturally aligned with
 * explicit padding so that their layout is the same for every compiler.
 */
#ifndef CP_FORMAT_MEASURE_H
#define CP_FORMAT_MEASURE_H

#include <stdint.h>

#define CP_MF_MAGIC "CPATHMF" /* 7 chars + NUL = 8 bytes */
#define CP_MF_VERSION 2	      /* 2: THREAD and UNPACK records, cpu_start/end_ns */
/* Additions within a version that older readers ignore (they read the fields as reserved
 * zeros); readers treat a file of a lower minor as having none of the later fields.
 * 1: rank and nranks in the common header (MPI). 2: node kind 7 (CP_MF_NODE_IDLE).
 * 3: the thread file's table of synchronization objects (struct cp_mf_sync_obj).
 * 4: MPI waits in that table (kinds CP_MF_SYNC_MPI_*, aux = peer and tag) and the process
 *    file's MPI_COMM records (communicator names). */
#define CP_MF_VERSION_MINOR 4
#define CP_MF_NO_RANK (-1) /* cp_mf_header.rank of a process that is no MPI rank */
#define CP_MF_MAX_METRICS 16
#define CP_MF_PROC_SUFFIX ".proc"
#define CP_MF_THREAD_SUFFIX ".thr"

enum cp_mf_kind {
	CP_MF_KIND_PROCESS = 1,
	CP_MF_KIND_THREAD = 2,
};

enum cp_mf_flags {
	CP_MF_FINISHED = 1u << 0, /* written at normal exit/thread end; absent if killed */
	CP_MF_CRASHED = 1u << 1,  /* the program died from a fatal signal (process file) */
	CP_MF_DISABLED = 1u << 2, /* the runtime disabled itself; see notes in process file */
	/* Process file: how the image relates to others (no NOTE records for routine events). */
	CP_MF_FORK_CHILD = 1u << 3, /* began as a fork child of ppid (its own file from then) */
	CP_MF_EXEC_ENDED = 1u << 4, /* ended by a successful exec: if followed, the new image's
				     * file is <pid>.<gen+1> (same pid, next gen) */
};

/* First 64 bytes of every file. */
struct cp_mf_header {
	char magic[8];	      /* CP_MF_MAGIC */
	uint32_t version;     /* CP_MF_VERSION */
	uint32_t kind;	      /* enum cp_mf_kind */
	uint32_t header_size; /* bytes of the fixed part (this kind's struct); records start here */
	uint32_t flags;	      /* enum cp_mf_flags */
	uint64_t used;	      /* bytes [0, used) are complete; release-stored by the writer */
	uint32_t version_minor; /* CP_MF_VERSION_MINOR (0 in files written before minors) */
	/* Minor 1: the MPI rank of the process in MPI_COMM_WORLD (CP_MF_NO_RANK if it is no
	 * MPI process) and the number of ranks (0 if unknown), from the launcher's
	 * environment at start, confirmed by MPI_Init when libcallpath-mpi.so is loaded. The
	 * host is the process file's hostname. */
	int32_t rank;
	uint32_t nranks;
	uint32_t pad;
	uint64_t reserved[2];
};

/* Where a metric's values come from. */
enum cp_mf_source {
	CP_MF_SRC_CPUTIME = 1,	/* CPU time of the thread; values in ns */
	CP_MF_SRC_REALTIME = 2, /* wall-clock time; values in ns */
	CP_MF_SRC_PERF = 3,	/* perf_event overflow; values in events (issue "metric sources") */
	CP_MF_SRC_SYNC = 4,	/* synchronous trigger: bytes, calls, ns blocked */
	CP_MF_SRC_PROBE = 5,	/* entry/exit probes (issue "probe") */
};

/* How a metric's samples are taken (for the report's "delivered rate" line). */
enum cp_mf_mechanism {
	CP_MF_MECH_NONE = 0,
	CP_MF_MECH_PERF_TASK_CLOCK = 1, /* perf_event task-clock / cpu-clock, hrtimer based */
	CP_MF_MECH_POSIX_TIMER = 2,	/* timer_create per thread, SIGEV_THREAD_ID */
	CP_MF_MECH_ITIMER = 3,		/* setitimer (process-wide, tick based) */
	CP_MF_MECH_PERF_EVENT = 4,
	CP_MF_MECH_INTERPOSE = 5,
};

struct cp_mf_metric {
	char name[32];	    /* "cputime", "realtime", "page-faults", "alloc-bytes" ... */
	char unit[16];	    /* unit of the stored values: "ns", "events", "bytes", "calls" */
	uint32_t source;    /* enum cp_mf_source */
	uint32_t mechanism; /* enum cp_mf_mechanism */
	uint64_t period;    /* requested sampling period in `unit` (0 for synchronous) */
	uint64_t reserved[2];
};

/* The process file's fixed part. Records follow at header.header_size. */
struct cp_mf_process {
	struct cp_mf_header h;
	int32_t pid;
	int32_t ppid;
	uint32_t gen;	     /* the <gen> of the file name */
	uint32_t nmetrics;   /* valid entries in metrics[] */
	uint64_t start_ns;   /* CLOCK_REALTIME at runtime start */
	uint64_t end_ns;     /* CLOCK_REALTIME at exit; 0 while running or if killed */
	int32_t exit_status; /* exit code, or 128+signal when CP_MF_CRASHED */
	uint32_t nthreads;   /* thread files created so far (tidx counter) */
	uint64_t tsc_hz;     /* TSC frequency if known (probes), else 0 */
	char hostname[64];
	struct cp_mf_metric metrics[CP_MF_MAX_METRICS];
	/* Process CPU time (CLOCK_PROCESS_CPUTIME_ID: all threads, user + system; it goes on
	 * across exec and starts at 0 in a fork child) when the runtime began measuring this
	 * image, and when the image ended (exit, exec; 0 while running or if killed). The
	 * difference to the previous image's cpu_end_ns (0 for a fork child or the first
	 * image) is start-up that no sample could see (exec, the dynamic loader, earlier
	 * constructors). Version 2 (these three); 0 in version 1 files. */
	uint64_t cpu_start_ns;
	uint64_t cpu_end_ns;
	/* That difference, when known (an image started by exec, or the first one), charged
	 * to the dynamic loader's entry point in thread 0's tree for CPU-time metrics. */
	uint64_t startup_ns;
	/* CPU the runtime itself used before sampling was armed (its constructor: files,
	 * load modules) and after it stopped (exit: notes, packing threads); part of
	 * cpu_end_ns - cpu_start_ns, never sampled. */
	uint64_t runtime_ns;
	uint64_t reserved[4];
};

/* Variable-length records of the process file: an 8-byte head, then `size - 8` bytes of
 * payload, padded so that the next record is 8-aligned (size includes the head, not the pad). */
enum cp_mf_record_type {
	CP_MF_REC_CMDLINE = 1, /* argv strings, each NUL-terminated */
	CP_MF_REC_EXE = 2,     /* absolute path of the executable, NUL-terminated */
	CP_MF_REC_MODULE = 3,  /* struct cp_mf_module + path (NUL-terminated) */
	CP_MF_REC_UNLOAD = 4,  /* struct cp_mf_unload */
	CP_MF_REC_NOTE = 5,    /* a message from the runtime for the user, NUL-terminated */
	CP_MF_REC_ENV = 6,     /* KEY=VALUE strings relevant to the run, each NUL-terminated */
	CP_MF_REC_THREAD = 7,  /* a packed thread: bytes [0, used) of its thread file, with
				* used == payload size and FINISHED set (version 2) */
	CP_MF_REC_UNPACK = 8,  /* struct cp_mf_unpack: the thread's file is its data again */
	/* Minor 4: struct cp_mf_mpi_comm + the communicator's name (NUL-terminated) as
	 * MPI_Comm_set_name gave it; a later record of the same number renames it. */
	CP_MF_REC_MPI_COMM = 9,
};

/* The number of an MPI communicator in the process (cp_mf_sync_obj.object of the MPI
 * kinds): MPI_COMM_WORLD, MPI_COMM_SELF, then N + 1 for the Nth other communicator the
 * process created or first used ("comm#N"); UNKNOWN for a request not seen posted. */
#define CP_MF_MPI_COMM_WORLD 0u
#define CP_MF_MPI_COMM_SELF 1u
#define CP_MF_MPI_COMM_UNKNOWN 0xffffffffu
struct cp_mf_mpi_comm {
	uint64_t comm; /* the communicator's number */
};

struct cp_mf_unpack {
	uint32_t tidx;
	uint32_t pad;
};

struct cp_mf_record {
	uint32_t type; /* enum cp_mf_record_type */
	uint32_t size; /* bytes including this head, excluding padding */
};

/* A load module mapped into the process. Module ids are process-wide, assigned in load
 * order from 0, never reused: a library unloaded and loaded again gets a new id (a new
 * epoch), so a node's (module, offset) always names one mapping. */
struct cp_mf_module {
	uint32_t id;
	uint32_t build_id_len; /* 0 if the module has no NT_GNU_BUILD_ID note */
	uint64_t bias;	       /* load bias: runtime address = bias + ELF virtual address */
	uint64_t text_lo;      /* lowest executable runtime address */
	uint64_t text_hi;      /* one past the highest */
	uint64_t load_seq;     /* order of load/unload events in the process */
	uint8_t build_id[32];
	/* followed by the path, NUL-terminated ("[vdso]" for the vDSO, the exe's full path) */
};

struct cp_mf_unload {
	uint32_t id;
	uint32_t pad;
	uint64_t load_seq; /* the unload's position in the load/unload event order */
};

/* Special values of cp_mf_node.module. */
/* not in any known module: offset is the absolute address */
#define CP_MF_MODULE_NONE 0xffffffffu

/* The kinds of calling-context tree node. */
enum cp_mf_node_kind {
	CP_MF_NODE_ROOT = 0,	/* node 0 of every thread file */
	CP_MF_NODE_CALL = 1,	/* a return address: the call site is the instruction before it */
	CP_MF_NODE_PC = 2,	/* the sampled instruction (a leaf; exclusive costs live here) */
	CP_MF_NODE_PARTIAL = 3, /* child of the root holding samples whose unwind stopped early */
	CP_MF_NODE_SIGNAL = 4,	/* interrupted PC under a signal frame (exact, not a return addr) */
	/* An OpenMP parallel region (version 2, since OpenMP support): module/offset is the
	 * entry of its outlined function; its parent is the context that started the region
	 * (the call site of GOMP_parallel...), its children the outlined function's frames.
	 * Every thread of the team has the same path to it. */
	CP_MF_NODE_REGION = 5,
	CP_MF_NODE_TASK = 6, /* an OpenMP task, the same way: its task function, under the
			      * context that created it */
	/* An idle OpenMP worker's samples (minor 2): a leaf, module NONE, offset 0, under the
	 * serial context of the thread that started the workers' last region (the master)
	 * at that time (omp-idle) */
	CP_MF_NODE_IDLE = 7,
};

/* The thread file's fixed part. Nodes follow at header.header_size. */
struct cp_mf_thread {
	struct cp_mf_header h;
	int32_t pid;
	int32_t tid;
	uint32_t gen; /* the process file this thread belongs to: <pid>.<gen>.proc */
	uint32_t tidx;
	uint32_t nmetrics;  /* same as the process file's */
	uint32_t node_size; /* bytes per node: sizeof(struct cp_mf_node) + 8 * nmetrics */
	uint64_t start_ns;  /* CLOCK_REALTIME when the thread was first seen */
	uint64_t end_ns;    /* CLOCK_REALTIME at thread exit; 0 while running or if killed */
	uint64_t cpu_ns;    /* thread CPU time, updated at exit (for the delivered rate) */
	uint64_t samples[CP_MF_MAX_METRICS]; /* samples (or events) taken, per metric */
	uint64_t unwind_complete;	     /* reached the outermost frame (_start, clone) */
	uint64_t unwind_partial; /* stopped early; the stack hangs under a PARTIAL node */
	uint64_t unwind_failed;	 /* not even one caller found */
	uint64_t dropped;	 /* samples lost (arena full, runtime disabled, re-entry) */
	uint64_t frames;	 /* total frames unwound (for average depth) */
	char name[16];		 /* thread name (prctl PR_GET_NAME) */
	/* Minor 3: the synchronization objects this thread waited on (-e wait): a table of
	 * sync_slots struct cp_mf_sync_obj right after this struct (header_size covers it, so
	 * readers of earlier minors skip it); 0 when the run did not measure waits. Waits
	 * that found the table full (3/4 of the slots used) are only counted here. */
	uint32_t sync_slots;
	uint32_t sync_used; /* slots in use (the writer's count; readers check kind) */
	uint64_t sync_lost_ns;
	uint64_t sync_lost_waits;
	uint64_t reserved[5];
};

/* The kind of a synchronization object (cp_mf_sync_obj.kind); 0 marks an empty slot. */
enum cp_mf_sync_kind {
	CP_MF_SYNC_MUTEX = 1,	/* pthread_mutex_lock / timedlock: the pthread_mutex_t */
	CP_MF_SYNC_RDLOCK = 2,	/* pthread_rwlock_rdlock: the pthread_rwlock_t */
	CP_MF_SYNC_WRLOCK = 3,	/* pthread_rwlock_wrlock: the pthread_rwlock_t */
	CP_MF_SYNC_COND = 4,	/* pthread_cond_(timed|clock)wait: the pthread_cond_t */
	CP_MF_SYNC_BARRIER = 5, /* pthread_barrier_wait: the pthread_barrier_t */
	CP_MF_SYNC_JOIN = 6,	/* pthread_join: the pthread_t joined */
	CP_MF_SYNC_SEM = 7,	/* sem_wait / sem_timedwait: the sem_t */
	/* Minor 4, MPI calls that block (libcallpath-mpi.so): object is the communicator's
	 * number (CP_MF_MPI_COMM_*), aux the peer rank and tag (CP_MF_MPI_AUX). */
	CP_MF_SYNC_MPI_RECV = 8,  /* MPI_Recv, Probe, Sendrecv, Wait* on a receive */
	CP_MF_SYNC_MPI_SEND = 9,  /* the blocking sends, Wait* on sends only */
	CP_MF_SYNC_MPI_COLL = 10, /* MPI_Barrier and the collectives (peer: the root) */
	CP_MF_SYNC_KIND_MAX = 10,
};

/* aux of an MPI kind: the peer rank in the communicator (the source of a receive, the
 * destination of a send, a collective's root) in the high 32 bits, the tag in the low 32
 * bits, each a two's-complement int32_t; CP_MF_MPI_NONE for none (a collective's tag, a
 * rootless collective's peer) or several (a Waitall on different peers). */
#define CP_MF_MPI_NONE INT32_MIN
#define CP_MF_MPI_AUX(peer, tag)                                                                   \
	((uint64_t)(uint32_t)(int32_t)(peer) << 32 | (uint32_t)(int32_t)(tag))
#define CP_MF_MPI_AUX_PEER(aux) ((int32_t)(uint32_t)((aux) >> 32))
#define CP_MF_MPI_AUX_TAG(aux) ((int32_t)(uint32_t)(aux))

/* One (object, kind, aux, call site) a thread waited on: open addressing on (object, node,
 * kind, aux), linear probing, filled by the owning thread only. The writer stores object,
 * node and aux, then kind (release); wait_ns and waits are then updated in place. A reader
 * takes slots whose kind is nonzero; node may lie beyond the nodes it read (a live file). */
struct cp_mf_sync_obj {
	uint64_t object; /* address of the object in the process (pthread_t for JOIN) */
	uint32_t node;	 /* the waiting call's node in this thread's tree (the wait's leaf; for
			  * MPI the program's call site, the parent of the wrapper's node) */
	uint16_t kind;	 /* enum cp_mf_sync_kind */
	uint16_t pad;
	uint64_t aux;	  /* 0; the MPI kinds: peer and tag (CP_MF_MPI_AUX) */
	uint64_t wait_ns; /* time blocked: the wait-time metric's share of this object */
	uint64_t waits;	  /* waits that blocked: the wait-calls metric's share */
};

/* A calling-context tree node. Node i lives at header_size + i * node_size; node 0 is the
 * root. A node is published (by the `used` store) only after parent/kind/module/offset are
 * written; its metric values are then updated in place by the owning thread. */
struct cp_mf_node {
	uint32_t parent; /* index of the parent node; 0xffffffff for the root */
	uint16_t kind;	 /* enum cp_mf_node_kind */
	uint16_t pad;
	uint32_t module; /* module id, or CP_MF_MODULE_NONE */
	uint32_t pad2;
	uint64_t offset;    /* ELF virtual address in the module (runtime address - bias) */
	uint64_t metrics[]; /* nmetrics exclusive values, in each metric's unit */
};

_Static_assert(sizeof(struct cp_mf_header) == 64, "header layout");
_Static_assert(sizeof(struct cp_mf_node) == 24, "node layout");
_Static_assert(sizeof(struct cp_mf_module) == 72, "module layout");
_Static_assert(sizeof(struct cp_mf_sync_obj) == 40, "sync object layout");
_Static_assert(sizeof(struct cp_mf_thread) % 8 == 0, "sync table alignment");

#endif
