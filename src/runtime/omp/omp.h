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
 * Module omp/ (public: omp.h): below core/ (the handler splices), uses unwind/ and the
 * shared state. region.c is signal-time; gomp.c (the exported wrappers) is not. */
#ifndef CP_RUNTIME_OMP_H
#define CP_RUNTIME_OMP_H

#include "runtime/unwind/unwind.h"

#include <stdint.h>

struct cp_thread;

/* Frames kept per region context; deeper contexts lose their outermost frames (partial). */
#define CP_OMP_MAX_FRAMES 256
/* Regions a thread may have open at once (nesting depth); deeper ones are not tracked. */
#define CP_OMP_MAX_NEST 8

struct cp_omp_region {
	void (*fn)(void *); /* the outlined function */
	void *data;	    /* its argument */
	int32_t nframes;    /* frames[0, nframes): the starting thread's context, leaf first */
	uint32_t status;    /* enum cp_unwind_status of that context */
	uint32_t started;   /* opened by a GOMP_*_start entry (closed by GOMP_parallel_end) */
	uint32_t pad;
	struct cp_frame frames[CP_OMP_MAX_FRAMES];
};

/* A thread's open regions (the ones it started), mapped at its first region. */
struct cp_omp_thread {
	uint32_t depth;
	uint32_t pad;
	struct cp_omp_region regions[CP_OMP_MAX_NEST];
};

/* The outlined function's stand-in: runs r->fn(r->data) with r as the thread's current
 * region. Lives in its own text section, so that the splice recognizes its frame. */
void cp_omp_trampoline(void *r);

/* Splices frames[0, n) (leaf first, capacity cap) at the innermost trampoline frame, if
 * the thread is in a region: returns the new n, *status becomes the region context's.
 * Async-signal-safe. */
int cp_omp_splice(const struct cp_thread *t, struct cp_frame *frames, int n, int cap,
		  enum cp_unwind_status *status);

#endif
