/* GCC's libgomp tasks: GOMP_task. The task function is replaced by
 * cp_omp_task_trampoline and the task's argument block is prefixed with a struct
 * cp_omp_task_arg naming the creating context (interned: context.c), so that wherever and
 * whenever a thread of the team runs the task (at once, at a barrier, in taskwait), its
 * samples hang under the context that created it. Our copy function always builds the
 * block: libgomp calls it both for deferred tasks (into the task's own storage) and for
 * tasks run at once (into a buffer on its stack), so the task function always gets our
 * layout. GOMP_taskloop is not wrapped: libgomp writes each task's bounds into the start
 * of its argument block. Not signal-time. */
#include "runtime/omp/omp-internal.h"
#include "runtime/core/runtime.h"

#include <stdbool.h>
#include <string.h>

struct task_src {
	const struct cp_omp_ctx *ctx;
	void (*cpyfn)(void *, void *);
	void *data;
	long size;
	uint64_t offset;
};

static void task_copy(void *dst, void *srcp)
{
	const struct task_src *s = srcp;
	struct cp_omp_task_arg *a = dst;
	a->ctx = s->ctx;
	a->offset = s->offset;
	char *inner = (char *)dst + s->offset;
	if (s->cpyfn)
		s->cpyfn(inner, s->data);
	else if (s->size > 0)
		memcpy(inner, s->data, (size_t)s->size);
}

/* The creating context of a task of fn, or NULL (not tracked: the task runs as given). */
static const struct cp_omp_ctx *task_context(omp_fn fn)
{
	struct cp_thread *t = cp_omp_thread_self();
	struct cp_omp_thread *ot = t ? cp_omp_thread_block(t) : NULL;
	if (!ot)
		return NULL;
	enum cp_unwind_status st;
	int n = cp_omp_capture(t, ot->scratch, CP_OMP_MAX_FRAMES, &st);
	return cp_omp_intern(fn, ot->scratch, n, st, CP_OMP_VIA_TRAMPOLINE);
}

CP_EXPORT void GOMP_task(omp_fn fn, void *data, void (*cpyfn)(void *, void *), long arg_size,
			 long arg_align, bool if_clause, unsigned flags, void **depend,
			 int priority, void *detach)
{
	const struct cp_omp_ctx *c = task_context(fn);
	if (!c) {
		GOMP_REAL(GOMP_task)
		(fn, data, cpyfn, arg_size, arg_align, if_clause, flags, depend, priority, detach);
		return;
	}
	long align = arg_align > 16 ? arg_align : 16;
	uint64_t offset =
	    (sizeof(struct cp_omp_task_arg) + (uint64_t)align - 1) & ~((uint64_t)align - 1);
	struct task_src src = {c, cpyfn, data, arg_size, offset};
	GOMP_REAL(GOMP_task)
	(cp_omp_task_trampoline, &src, task_copy, (long)offset + arg_size, align, if_clause, flags,
	 depend, priority, detach);
}
