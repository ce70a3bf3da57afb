/* OpenMP regions in their calling context (docs/internals/omp.md).
 *
 * When a thread starts a parallel region (a GOMP_* entry point of libgomp: gomp.c), its
 * calling context up to the region is unwound once into a region record, and the runtime
 * hands the outlined function to libgomp wrapped in cp_omp_trampoline. Every thread of
 * the team then runs the outlined function under the trampoline, which makes the record
 * the thread's current region; a path unwound on that thread (a sample, a synchronous
 * trigger, a nested region's capture) is spliced at the trampoline's frame: the frames
 * outside it (the worker's thread root, libgomp's pool loop) are replaced by a REGION
 * frame (the outlined function's entry) and the recorded context. Master and workers thus
 * get the same path, main > ... > caller > [region] > outlined function > ...
 *
 * Tasks (GOMP_task, task.c) carry their creator's context the same way: the task runs under
 * cp_omp_task_trampoline, spliced onto the context that created it.
 *
 * Module omp/ (public: omp.h): below core/ (the handler splices), uses unwind/ and the
 * shared state. region.c is signal-time; gomp.c, task.c and context.c (the exported
 * wrappers, the context table) are not. */
#ifndef CP_RUNTIME_OMP_H
#define CP_RUNTIME_OMP_H

#include "runtime/unwind/unwind.h"

#include <stdint.h>

struct cp_thread;

/* Frames kept per region context; deeper contexts lose their outermost frames (partial). */
#define CP_OMP_MAX_FRAMES 256
/* Regions a thread may have open at once (nesting depth); deeper ones are not tracked. */
#define CP_OMP_MAX_NEST 8

/* A context that threads splice their paths onto: a region's (omp_fn its outlined
 * function) or a task's (its task function). */
struct cp_omp_ctx {
	void (*fn)(void *);	       /* the outlined function / the task function */
	void *data;		       /* a region's argument (tasks carry theirs) */
	const struct cp_frame *frames; /* the starting thread's context, leaf first */
	int32_t nframes;
	uint32_t status; /* enum cp_unwind_status of that context */
	uint32_t kind;	 /* CP_FRAME_REGION or CP_FRAME_TASK: the frame the splice inserts */
	uint32_t via;	 /* enum cp_omp_via: where a thread's path is cut */
	/* A region record's generation: bumped when the region ends (libgomp), so that a
	 * thread that left the outlined function knows whether the region still runs */
	volatile uint32_t gen;
	uint32_t pad;
};

/* How the frame that runs a context's code is found in a thread's path. */
enum cp_omp_via {
	/* GCC libgomp: the innermost frame of our trampolines (gomp.c, task.c) */
	CP_OMP_VIA_TRAMPOLINE = 0,
	/* LLVM libomp (OMPT, ompt.c): the innermost OpenMP-runtime frame that called code
	 * outside the runtimes (after any leading frames of libomp, libc or ours) */
	CP_OMP_VIA_RUNTIME = 1,
};

/* The text of the OpenMP runtime (libgomp or libomp) and of libc, [lo, hi), set once
 * (cp_omp_set_runtime) when the program first enters it. */
extern uintptr_t cp_omp_rt_lo, cp_omp_rt_hi, cp_omp_libc_lo, cp_omp_libc_hi;

struct cp_omp_region {
	struct cp_omp_ctx c;
	uint32_t started; /* opened by a GOMP_*_start entry (closed by GOMP_parallel_end) */
	uint32_t pad;
	struct cp_frame frames[CP_OMP_MAX_FRAMES]; /* c.frames */
};

/* A thread's open regions (the ones it started), mapped at its first region or task. */
struct cp_omp_thread {
	uint32_t depth;
	uint32_t pad;
	struct cp_omp_region regions[CP_OMP_MAX_NEST];
	struct cp_frame scratch[CP_OMP_MAX_FRAMES]; /* a task's context before it is interned */
	/* OMPT: the current context before each open implicit task (restored at its end) */
	uint32_t nsaved;
	uint32_t pad2;
	const struct cp_omp_ctx *saved[CP_OMP_MAX_NEST];
};

/* The outlined function's stand-in: runs r->c.fn(r->c.data) with r as the thread's
 * current context. Lives in its own text section, so that the splice recognizes its frame. */
void cp_omp_trampoline(void *r);
/* A task function's stand-in (task.c): its argument begins with a struct cp_omp_task_arg,
 * the task's own argument follows at `offset`. Same section. */
struct cp_omp_task_arg {
	const struct cp_omp_ctx *ctx; /* interned: lives as long as the process */
	uint64_t offset;
};
void cp_omp_task_trampoline(void *arg);

/* The context of the calling thread, spliced if it is inside a region or task, into
 * frames[0, cap): its length (0 if unknown), *status. The runtime's own frames stay in
 * (paths leave them out). Outside signal context. */
int cp_omp_capture(struct cp_thread *t, struct cp_frame *frames, int cap,
		   enum cp_unwind_status *status);
/* Records the text ranges of the OpenMP runtime that holds addr, and of libc. */
void cp_omp_set_runtime(const void *addr);
/* The calling thread's state if its regions and tasks are tracked now, else NULL. */
struct cp_thread *cp_omp_thread_self(void);
/* The one copy of a context (fn, frames, status) for the life of the process (context.c;
 * a task's record outlives its creator's frame), or NULL if the table is full. */
const struct cp_omp_ctx *cp_omp_intern(void (*fn)(void *), const struct cp_frame *frames, int n,
				       enum cp_unwind_status status, enum cp_omp_via via);

/* Splices frames[0, n) (leaf first, capacity cap) at the innermost trampoline frame, if
 * the thread is in a region or task: returns the new n, *status becomes the region context's.
 * Async-signal-safe. */
int cp_omp_splice(const struct cp_thread *t, struct cp_frame *frames, int n, int cap,
		  enum cp_unwind_status *status);

/* omp-idle (docs/internals/omp.md, "Idle workers"): the thread that started the last
 * top-level region (not inside any region then), and its serial context: published by
 * cp_omp_splice from its samples outside regions, and when a top-level region of it ends
 * (the region's context is where it continues). An idle worker's sample (a pool thread,
 * outside any region, in the OpenMP runtime) is spliced onto it under an IDLE frame.
 * Async-signal-safe; a publish that would interrupt another is skipped. */
extern const struct cp_thread *volatile cp_omp_master;
void cp_omp_serial_publish(const struct cp_frame *frames, int n, enum cp_unwind_status status);

#endif
