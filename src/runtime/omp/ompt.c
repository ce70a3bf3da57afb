/* LLVM's libomp (clang -fopenmp): regions and tasks through the OpenMP tools interface
 * (OMPT). libomp looks up ompt_start_tool when it starts; ours registers callbacks:
 *   parallel_begin   (the encountering thread) its context, once, into a region record;
 *   implicit_task    (every thread of the team) the record becomes the thread's current
 *                    context, the previous one comes back at the task's end;
 *   task_create      an explicit task's creating context, interned (context.c);
 *   task_schedule    the task a thread switches to makes its context current.
 * The splice then cuts a thread's path at the libomp frame that called the task's code
 * (CP_OMP_VIA_RUNTIME, region.c), since libomp calls the outlined function itself. The
 * region's and task's frame carries the program's call site (codeptr_ra): libomp does not
 * tell a tool the outlined function. The OMPT types below are the interface's ABI (the
 * OpenMP 5 specification, "OMPT Interface"). Not signal-time. */
#include "runtime/omp/omp-internal.h"
#include "runtime/core/runtime.h"

#include <dlfcn.h>
#include <link.h>
#include <sched.h>
#include <stddef.h>

typedef union {
	uint64_t value;
	void *ptr;
} ompt_data_t;

typedef void (*ompt_callback_t)(void);
typedef void (*(*ompt_function_lookup_t)(const char *))(void);
typedef int (*ompt_set_callback_t)(int event, ompt_callback_t callback);
typedef int (*ompt_initialize_t)(ompt_function_lookup_t lookup, int initial_device,
				 ompt_data_t *tool_data);
typedef void (*ompt_finalize_t)(ompt_data_t *tool_data);

typedef struct {
	ompt_initialize_t initialize;
	ompt_finalize_t finalize;
	ompt_data_t tool_data;
} ompt_start_tool_result_t;

enum {
	OMPT_CB_PARALLEL_BEGIN = 3,
	OMPT_CB_PARALLEL_END = 4,
	OMPT_CB_TASK_CREATE = 5,
	OMPT_CB_TASK_SCHEDULE = 6,
	OMPT_CB_IMPLICIT_TASK = 7,
	OMPT_SCOPE_BEGIN = 1,
	OMPT_TASK_INITIAL = 1,
	OMPT_TASK_EXPLICIT = 4,
};

CP_EXPORT ompt_start_tool_result_t *ompt_start_tool(unsigned int omp_version,
						    const char *runtime_version);

/* The executable segment of the object that holds addr, into [*lo, *hi). */
struct text_find {
	uintptr_t addr, lo, hi;
};

static int text_of(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	struct text_find *f = arg;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X) && f->addr - lo < ph->p_memsz) {
			f->lo = lo;
			f->hi = lo + ph->p_memsz;
			return 1;
		}
	}
	return 0;
}

static void text_range(const void *addr, uintptr_t *lo, uintptr_t *hi)
{
	struct text_find f = {(uintptr_t)addr, 0, 0};
	dl_iterate_phdr(text_of, &f);
	*lo = f.lo;
	*hi = f.hi;
}

void cp_omp_set_runtime(const void *addr)
{
	if (__atomic_load_n(&cp_omp_rt_hi, __ATOMIC_ACQUIRE))
		return;
	uintptr_t lo, hi;
	text_range((const void *)(uintptr_t)sched_yield, &cp_omp_libc_lo, &cp_omp_libc_hi);
	text_range(addr, &lo, &hi);
	cp_omp_rt_lo = lo;
	__atomic_store_n(&cp_omp_rt_hi, hi, __ATOMIC_RELEASE);
}

/* The calling thread's context without its innermost frames in libomp or in the runtime
 * (the callback's own, libomp's fork or task-creation code): it ends at the program's
 * call into libomp. */
static int ompt_capture(struct cp_thread *t, struct cp_frame *frames, enum cp_unwind_status *st)
{
	int n = cp_omp_capture(t, frames, CP_OMP_MAX_FRAMES, st);
	int k = 0;
	while (k < n && ((frames[k].pc - 1 - cp_omp_rt_lo < cp_omp_rt_hi - cp_omp_rt_lo) ||
			 cp_rt_owns_pc(frames[k].pc, frames[k].kind == CP_FRAME_RETURN)))
		k++;
	__builtin_memmove(frames, frames + k, (size_t)(n - k) * sizeof(frames[0]));
	return n - k;
}

static void on_parallel_begin(ompt_data_t *task, const void *frame, ompt_data_t *parallel,
			      unsigned requested, int flags, const void *codeptr_ra)
{
	(void)task, (void)frame, (void)requested, (void)flags;
	parallel->ptr = NULL;
	struct cp_thread *t = cp_omp_thread_self();
	struct cp_omp_thread *ot = t ? cp_omp_thread_block(t) : NULL;
	if (!ot || ot->depth >= CP_OMP_MAX_NEST)
		return;
	if (!ot->depth && !t->omp_cur)
		cp_omp_master = t;
	struct cp_omp_region *r = &ot->regions[ot->depth++];
	enum cp_unwind_status st;
	r->c.fn = (void (*)(void *))(uintptr_t)codeptr_ra;
	r->c.data = NULL;
	r->c.frames = r->frames;
	r->c.nframes = ompt_capture(t, r->frames, &st);
	r->c.status = (uint32_t)st;
	r->c.kind = CP_FRAME_REGION;
	r->c.via = CP_OMP_VIA_RUNTIME;
	r->started = 0;
	parallel->ptr = r;
}

static void on_parallel_end(ompt_data_t *parallel, ompt_data_t *task, int flags,
			    const void *codeptr_ra)
{
	(void)task, (void)flags, (void)codeptr_ra;
	struct cp_thread *t = cp_self;
	struct cp_omp_ctx *c = parallel->ptr;
	if (c) /* the team's waits after this are idle (omp_after) */
		__atomic_add_fetch(&c->gen, 1, __ATOMIC_RELEASE);
	if (c && t && t->omp && t->omp->depth && !--t->omp->depth && !t->omp_cur &&
	    cp_omp_master == t)
		cp_omp_serial_publish(c->frames, c->nframes, (enum cp_unwind_status)c->status);
}

static void on_implicit_task(int endpoint, ompt_data_t *parallel, ompt_data_t *task,
			     unsigned nthreads, unsigned index, int flags)
{
	(void)nthreads;
	struct cp_thread *t = cp_self;
	struct cp_omp_thread *ot = t ? cp_omp_thread_block(t) : NULL;
	if (!ot || (flags & OMPT_TASK_INITIAL))
		return;
	if (endpoint == OMPT_SCOPE_BEGIN) {
		const struct cp_omp_ctx *c = parallel ? parallel->ptr : NULL;
		if (index)
			t->omp_worker = 1; /* a pool thread (omp-idle) */
		if (c) { /* its waits in the runtime belong to the region until it ends */
			t->omp_after_gen = c->gen;
			__atomic_signal_fence(__ATOMIC_SEQ_CST);
			t->omp_after = c;
		}
		task->ptr = (void *)c;
		if (ot->nsaved < CP_OMP_MAX_NEST)
			ot->saved[ot->nsaved] = t->omp_cur;
		ot->nsaved++;
		t->omp_cur = c;
	} else if (ot->nsaved) {
		ot->nsaved--;
		t->omp_cur = ot->nsaved < CP_OMP_MAX_NEST ? ot->saved[ot->nsaved] : NULL;
	}
}

static void on_task_create(ompt_data_t *parent, const void *frame, ompt_data_t *task, int flags,
			   int has_dependences, const void *codeptr_ra)
{
	(void)parent, (void)frame, (void)has_dependences;
	task->ptr = NULL;
	if (!(flags & OMPT_TASK_EXPLICIT))
		return;
	struct cp_thread *t = cp_omp_thread_self();
	struct cp_omp_thread *ot = t ? cp_omp_thread_block(t) : NULL;
	if (!ot)
		return;
	enum cp_unwind_status st;
	int n = ompt_capture(t, ot->scratch, &st);
	task->ptr = (void *)cp_omp_intern((void (*)(void *))(uintptr_t)codeptr_ra, ot->scratch, n,
					  st, CP_OMP_VIA_RUNTIME);
}

static void on_task_schedule(ompt_data_t *prior, int status, ompt_data_t *next)
{
	(void)prior, (void)status;
	struct cp_thread *t = cp_self;
	if (t)
		t->omp_cur = next ? next->ptr : NULL;
}

static int ompt_initialize(ompt_function_lookup_t lookup, int initial_device,
			   ompt_data_t *tool_data)
{
	(void)initial_device, (void)tool_data;
	ompt_set_callback_t set = (ompt_set_callback_t)lookup("ompt_set_callback");
	if (!set)
		return 0;
	cp_omp_set_runtime((const void *)(uintptr_t)lookup);
	if (!cp_omp_rt_hi)
		return 0;
	set(OMPT_CB_PARALLEL_BEGIN, (ompt_callback_t)(uintptr_t)on_parallel_begin);
	set(OMPT_CB_PARALLEL_END, (ompt_callback_t)(uintptr_t)on_parallel_end);
	set(OMPT_CB_IMPLICIT_TASK, (ompt_callback_t)(uintptr_t)on_implicit_task);
	set(OMPT_CB_TASK_CREATE, (ompt_callback_t)(uintptr_t)on_task_create);
	set(OMPT_CB_TASK_SCHEDULE, (ompt_callback_t)(uintptr_t)on_task_schedule);
	return 1;
}

static void ompt_finalize(ompt_data_t *tool_data)
{
	(void)tool_data;
}

CP_EXPORT ompt_start_tool_result_t *ompt_start_tool(unsigned int omp_version,
						    const char *runtime_version)
{
	(void)omp_version, (void)runtime_version;
	static ompt_start_tool_result_t result = {ompt_initialize, ompt_finalize, {0}};
	if (!cp_rt.active)
		return NULL;
	return &result;
}
