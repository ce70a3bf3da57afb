/* GCC's libgomp: the entry points that start a team of threads on an outlined function
 * (omp.h). Each wrapper records the calling thread's context in a region record, passes
 * cp_omp_trampoline and the record to libgomp instead of (fn, data), and closes the
 * record when the region has ended. The entry points are exported by every build of the
 * runtime: a program without OpenMP never calls them, so they cost it nothing; the real
 * functions are found with dlsym(RTLD_NEXT) at the first call (libgomp may be loaded
 * late, by dlopen). Not signal-time: called from the program only. */
#include "runtime/omp/omp-internal.h"
#include "runtime/core/runtime.h"
#include "runtime/unwind/unwind.h"

#include <dlfcn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

/* The next definition of name; a program calling a GOMP_* entry point has libgomp
 * loaded, so a miss means a broken installation: said once, then abort (as for libc). */
void *cp_omp_next(const char *name)
{
	void *p = dlsym(RTLD_NEXT, name);
	if (!p) {
		fprintf(stderr, "callpath: %s not found after the runtime (libgomp?): %s\n", name,
			dlerror());
		abort();
	}
	return p;
}

struct cp_thread *cp_omp_thread_self(void)
{
	struct cp_thread *t = cp_self;
	if (!t || !cp_rt.active || !cp_rt.enabled || t->stopped || cp_rt_foreign_child())
		return NULL;
	return t;
}

struct cp_omp_thread *cp_omp_thread_block(struct cp_thread *t)
{
	if (!t->omp) {
		void *p = mmap(NULL, sizeof(struct cp_omp_thread), PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			return NULL;
		t->omp = p;
	}
	return t->omp;
}

CP_EXPORT void GOMP_parallel_end(void);

/* A region record holding the calling thread's context (spliced, if the thread is itself
 * in a region), or NULL when the region is not tracked (thread not measured, runtime
 * off, nesting too deep): libgomp then gets the program's own (fn, data). */
static __attribute__((noinline)) struct cp_omp_region *region_open(omp_fn fn, void *data)
{
	struct cp_thread *t = cp_omp_thread_self();
	if (!t)
		return NULL;
	struct cp_omp_thread *ot = cp_omp_thread_block(t);
	if (!ot || ot->depth >= CP_OMP_MAX_NEST)
		return NULL;
	if (!cp_omp_rt_hi) /* libgomp's text, for the threads' waits after the region's code */
		cp_omp_set_runtime((const void *)(uintptr_t)GOMP_REAL(GOMP_parallel_end));
	if (!ot->depth && !t->omp_cur)
		cp_omp_master = t;
	struct cp_omp_region *r = &ot->regions[ot->depth++];
	enum cp_unwind_status st;
	r->c.fn = fn;
	r->c.data = data;
	r->c.frames = r->frames;
	r->c.nframes = cp_omp_capture(t, r->frames, CP_OMP_MAX_FRAMES, &st);
	r->c.status = (uint32_t)st;
	r->c.kind = CP_FRAME_REGION;
	r->c.via = CP_OMP_VIA_TRAMPOLINE;
	r->started = 0;
	return r;
}

static void region_close(struct cp_omp_region *r)
{
	if (r) {
		__atomic_add_fetch(&r->c.gen, 1, __ATOMIC_RELEASE);
		struct cp_thread *t = cp_self;
		if (!--t->omp->depth && !t->omp_cur && cp_omp_master == t)
			cp_omp_serial_publish(r->frames, r->c.nframes,
					      (enum cp_unwind_status)r->c.status);
	}
}

/* The region record of a GOMP_*_start entry stays open until GOMP_parallel_end. */
static struct cp_omp_region *region_open_started(omp_fn fn, void *data)
{
	struct cp_omp_region *r = region_open(fn, data);
	if (r)
		r->started = 1;
	return r;
}

#define TRAMP_FN(r, fn) ((r) ? cp_omp_trampoline : (fn))
#define TRAMP_DATA(r, data) ((r) ? (void *)(r) : (data))

/* ---- GCC >= 4.9: the call returns when the region has ended ---- */

CP_EXPORT void GOMP_parallel(omp_fn fn, void *data, unsigned nthreads, unsigned flags)
{
	struct cp_omp_region *r = region_open(fn, data);
	GOMP_REAL(GOMP_parallel)(TRAMP_FN(r, fn), TRAMP_DATA(r, data), nthreads, flags);
	region_close(r);
}

CP_EXPORT unsigned GOMP_parallel_reductions(omp_fn fn, void *data, unsigned nthreads,
					    unsigned flags)
{
	struct cp_omp_region *r = region_open(fn, data);
	unsigned rc = GOMP_REAL(GOMP_parallel_reductions)(TRAMP_FN(r, fn), TRAMP_DATA(r, data),
							  nthreads, flags);
	region_close(r);
	return rc;
}

/* The other entry points differ in their arguments after (fn, data) only: one wrapper
 * shape, opening the region with `open` and, once the call returned, closing it with
 * `close` (region_keep for the *_start entries, closed by GOMP_parallel_end). */
static void region_keep(struct cp_omp_region *r)
{
	(void)r;
}

#define GOMP_WRAP(name, open, close, params, ...)                                                  \
	CP_EXPORT void name params;                                                                \
	CP_EXPORT void name params                                                                 \
	{                                                                                          \
		struct cp_omp_region *r = open(fn, data);                                          \
		GOMP_REAL(name)(TRAMP_FN(r, fn), TRAMP_DATA(r, data), __VA_ARGS__);                \
		close(r);                                                                          \
	}
#define P_3U (omp_fn fn, void *data, unsigned a, unsigned b, unsigned flags)
#define P_CHUNK                                                                                    \
	(omp_fn fn, void *data, unsigned nt, long start, long end, long incr, long chunk,          \
	 unsigned flags)
#define P_RUNTIME                                                                                  \
	(omp_fn fn, void *data, unsigned nt, long start, long end, long incr, unsigned flags)
#define P_START (omp_fn fn, void *data, unsigned nt, long start, long end, long incr, long chunk)

/* parallel sections (count), host teams (nteams, thread_limit) */
GOMP_WRAP(GOMP_parallel_sections, region_open, region_close, P_3U, a, b, flags)
GOMP_WRAP(GOMP_teams_reg, region_open, region_close, P_3U, a, b, flags)
/* combined parallel loops: with a chunk size, and without (the runtime schedules) */
GOMP_WRAP(GOMP_parallel_loop_static, region_open, region_close, P_CHUNK, nt, start, end, incr,
	  chunk, flags)
GOMP_WRAP(GOMP_parallel_loop_dynamic, region_open, region_close, P_CHUNK, nt, start, end, incr,
	  chunk, flags)
GOMP_WRAP(GOMP_parallel_loop_guided, region_open, region_close, P_CHUNK, nt, start, end, incr,
	  chunk, flags)
GOMP_WRAP(GOMP_parallel_loop_nonmonotonic_dynamic, region_open, region_close, P_CHUNK, nt, start,
	  end, incr, chunk, flags)
GOMP_WRAP(GOMP_parallel_loop_nonmonotonic_guided, region_open, region_close, P_CHUNK, nt, start,
	  end, incr, chunk, flags)
GOMP_WRAP(GOMP_parallel_loop_runtime, region_open, region_close, P_RUNTIME, nt, start, end, incr,
	  flags)
GOMP_WRAP(GOMP_parallel_loop_nonmonotonic_runtime, region_open, region_close, P_RUNTIME, nt, start,
	  end, incr, flags)
GOMP_WRAP(GOMP_parallel_loop_maybe_nonmonotonic_runtime, region_open, region_close, P_RUNTIME, nt,
	  start, end, incr, flags)

/* ---- the GCC < 4.9 ABI: the master calls fn itself between *_start and
 * GOMP_parallel_end, so its own share keeps its natural path (no trampoline frame) ---- */

GOMP_WRAP(GOMP_parallel_start, region_open_started, region_keep,
	  (omp_fn fn, void *data, unsigned nt), nt)
GOMP_WRAP(GOMP_parallel_sections_start, region_open_started, region_keep,
	  (omp_fn fn, void *data, unsigned nt, unsigned count), nt, count)
GOMP_WRAP(GOMP_parallel_loop_static_start, region_open_started, region_keep, P_START, nt, start,
	  end, incr, chunk)
GOMP_WRAP(GOMP_parallel_loop_dynamic_start, region_open_started, region_keep, P_START, nt, start,
	  end, incr, chunk)
GOMP_WRAP(GOMP_parallel_loop_guided_start, region_open_started, region_keep, P_START, nt, start,
	  end, incr, chunk)
GOMP_WRAP(GOMP_parallel_loop_runtime_start, region_open_started, region_keep,
	  (omp_fn fn, void *data, unsigned nt, long start, long end, long incr), nt, start, end,
	  incr)

CP_EXPORT void GOMP_parallel_end(void)
{
	GOMP_REAL(GOMP_parallel_end)();
	struct cp_thread *t = cp_self;
	struct cp_omp_thread *ot = t ? t->omp : NULL;
	if (ot && ot->depth && ot->regions[ot->depth - 1].started)
		region_close(&ot->regions[ot->depth - 1]);
}
