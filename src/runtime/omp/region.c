/* The signal-time half of the OpenMP support (omp.h): the trampolines that mark a thread's
 * current region or task and the splice of a thread's path onto its context. */
#include "runtime/omp/omp.h"
#include "runtime/core/runtime.h"

#include "base/sigsafe/banned.h"

/* The trampolines' text ends at cp_omp_text_end: their section holds nothing else, and the
 * label sits in subsection 1, which the assembler places after everything the compiler
 * emits there (subsection 0). (The linker's __start_/__stop_ bounds would be exported by
 * the shared library.) */
__asm__(".pushsection cp_omp_text,\"ax\",@progbits\n"
	".subsection 1\n"
	".globl cp_omp_text_end\n"
	".hidden cp_omp_text_end\n"
	"cp_omp_text_end:\n"
	".popsection\n");
extern const char cp_omp_text_end[] __attribute__((visibility("hidden")));

#define OMP_TEXT __attribute__((section("cp_omp_text"), noinline))

/* Runs fn(arg) with c as the thread's current context. */
static inline __attribute__((always_inline)) void run_in(const struct cp_omp_ctx *c,
							 void (*fn)(void *), void *arg)
{
	struct cp_thread *t = cp_self;
	if (!t) {
		fn(arg);
		return;
	}
	const struct cp_omp_ctx *prev = t->omp_cur;
	t->omp_cur = c;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	fn(arg);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	t->omp_cur = prev;
}

OMP_TEXT void cp_omp_trampoline(void *p)
{
	const struct cp_omp_region *r = p;
	struct cp_thread *t = cp_self;
	const struct cp_omp_thread *ot = t ? t->omp : NULL;
	if (t && !(ot && ot->depth && &ot->regions[ot->depth - 1] == r))
		t->omp_worker = 1; /* not the region's starter */
	run_in(&r->c, r->c.fn, r->c.data);
	if (t) {
		t->omp_after_gen = r->c.gen;
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		t->omp_after = &r->c;
	}
}

OMP_TEXT void cp_omp_task_trampoline(void *p)
{
	const struct cp_omp_task_arg *a = p;
	run_in(a->ctx, a->ctx->fn, (char *)p + a->offset);
}

uintptr_t cp_omp_rt_lo, cp_omp_rt_hi, cp_omp_libc_lo, cp_omp_libc_hi;

static int in_range(const struct cp_frame *f, uintptr_t lo, uintptr_t hi)
{
	uintptr_t pc = f->pc - (f->kind == CP_FRAME_RETURN);
	return pc - lo < hi - lo;
}

static int in_trampoline(const struct cp_frame *f)
{
	uintptr_t lo = (uintptr_t)cp_omp_trampoline, task = (uintptr_t)cp_omp_task_trampoline;
	return in_range(f, task < lo ? task : lo, (uintptr_t)cp_omp_text_end);
}

static int cut_trampoline(const struct cp_frame *frames, int n)
{
	int i = 0;
	while (i < n && !in_trampoline(&frames[i]))
		i++;
	return i;
}

/* A thread that left a region's outlined function but not the region (libgomp's end
 * barrier, in the pool loop or, for the master, under GOMP_parallel): from the leaf, libc
 * frames, then libgomp's; the first frame outside libgomp is where the path leaves the
 * OpenMP runtime (the thread's start, or our wrapper). n if the leaf is elsewhere. */
static int cut_after(const struct cp_frame *frames, int n)
{
	int i = 0;
	while (i < n && in_range(&frames[i], cp_omp_libc_lo, cp_omp_libc_hi))
		i++;
	int first = i;
	while (i < n && in_range(&frames[i], cp_omp_rt_lo, cp_omp_rt_hi))
		i++;
	return i > first ? i : n;
}

/* libomp's frame that runs the current task's code: skip the frames of libomp, libc and
 * ours at the leaf (a wait in a barrier, a system call), then the program's frames; the
 * next libomp frame called the task (__kmp_invoke_microtask, or libomp's task invoker). */
static int cut_runtime(const struct cp_frame *frames, int n)
{
	int i = 0;
	while (i < n && (in_range(&frames[i], cp_omp_rt_lo, cp_omp_rt_hi) ||
			 in_range(&frames[i], cp_omp_libc_lo, cp_omp_libc_hi) ||
			 cp_rt_owns_pc(frames[i].pc, frames[i].kind == CP_FRAME_RETURN)))
		i++;
	while (i < n && !in_range(&frames[i], cp_omp_rt_lo, cp_omp_rt_hi))
		i++;
	return i;
}

/* frames[i, ...) replaced by [the outlined function's entry, if entry,] the context's
 * frame and its frames. */
static int splice_at(struct cp_frame *frames, int n, int i, int cap, const struct cp_omp_ctx *c,
		     int entry, enum cp_unwind_status *status)
{
	if (i + entry >= cap)
		return n;
	if (entry) { /* exact pc: the region's code, not a return address before it */
		frames[i].pc = (uintptr_t)c->fn;
		frames[i].kind = CP_FRAME_SIGNAL;
		frames[i].how = CP_HOW_NONE;
		i++;
	}
	frames[i].pc = (uintptr_t)c->fn;
	frames[i].kind = c->kind;
	frames[i].how = CP_HOW_NONE;
	int m = c->nframes;
	enum cp_unwind_status st = (enum cp_unwind_status)c->status;
	if (m > cap - i - 1) {
		m = cap - i - 1;
		st = CP_UNWIND_PARTIAL;
	}
	__builtin_memcpy(&frames[i + 1], c->frames, (size_t)m * sizeof(frames[0]));
	*status = st;
	return i + 1 + m;
}

/* omp-idle: the serial context of the master (the thread that started the last
 * top-level region), published by the master's unspliced samples and at the end of its
 * top-level regions; read by idle workers' samples. A sequence lock: odd while written;
 * a writer that finds it odd (its own handler interrupting it) skips. */
static struct {
	volatile uint32_t seq;
	int32_t n;
	uint32_t status;
	uint32_t pad;
	struct cp_frame frames[CP_OMP_MAX_FRAMES];
} serial;
const struct cp_thread *volatile cp_omp_master;

void cp_omp_serial_publish(const struct cp_frame *frames, int n, enum cp_unwind_status status)
{
	uint32_t s = __atomic_load_n(&serial.seq, __ATOMIC_ACQUIRE);
	if ((s & 1) || !__atomic_compare_exchange_n(&serial.seq, &s, s + 1, 0, __ATOMIC_ACQ_REL,
						    __ATOMIC_RELAXED))
		return;
	__atomic_thread_fence(__ATOMIC_RELEASE);
	if (n > CP_OMP_MAX_FRAMES) {
		n = CP_OMP_MAX_FRAMES;
		status = CP_UNWIND_PARTIAL;
	}
	__builtin_memcpy(serial.frames, frames, (size_t)(n > 0 ? n : 0) * sizeof(frames[0]));
	serial.n = n;
	serial.status = (uint32_t)status;
	__atomic_store_n(&serial.seq, s + 2, __ATOMIC_RELEASE);
}

/* An idle worker's path: an IDLE frame on the master's serial context; n (unchanged) if
 * none was published yet. */
static int splice_idle(struct cp_frame *frames, int n, int cap, enum cp_unwind_status *status)
{
	struct cp_frame idle = {.pc = 0, .kind = CP_FRAME_IDLE, .how = CP_HOW_NONE};
	for (int tries = 0; tries < 4; tries++) {
		uint32_t s = __atomic_load_n(&serial.seq, __ATOMIC_ACQUIRE);
		if (s & 1)
			continue;
		int m = serial.n;
		enum cp_unwind_status st = (enum cp_unwind_status)serial.status;
		if (m <= 0 || cap < 2)
			return n;
		if (m > cap - 1) {
			m = cap - 1;
			st = CP_UNWIND_PARTIAL;
		}
		__builtin_memcpy(&frames[1], serial.frames, (size_t)m * sizeof(frames[0]));
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (__atomic_load_n(&serial.seq, __ATOMIC_RELAXED) == s) {
			frames[0] = idle;
			*status = st;
			return m + 1;
		}
	}
	frames[0] = idle; /* the master kept writing: idle, context unknown */
	*status = CP_UNWIND_PARTIAL;
	return 1;
}

int cp_omp_splice(const struct cp_thread *t, struct cp_frame *frames, int n, int cap,
		  enum cp_unwind_status *status)
{
	if (n <= 0)
		return n;
	const struct cp_omp_ctx *c = t->omp_cur;
	if (c) {
		int i = c->via == CP_OMP_VIA_RUNTIME ? cut_runtime(frames, n)
						     : cut_trampoline(frames, n);
		if (i < n)
			return splice_at(frames, n, i, cap, c, 0, status);
	}
	c = t->omp_after;
	if (c && c->gen == t->omp_after_gen) {
		int i = cut_after(frames, n);
		if (i < n) /* libomp names no outlined function: its wait under the region */
			return splice_at(frames, n, i, cap, c, c->via == CP_OMP_VIA_TRAMPOLINE,
					 status);
	}
	/* (libomp ends a worker's implicit task only when the next region starts) */
	if (t->omp_cur && t->omp_cur->via == CP_OMP_VIA_TRAMPOLINE)
		return n;
	if (t->omp_worker && cut_after(frames, n) < n)
		return splice_idle(frames, n, cap, status);
	if (t == cp_omp_master)
		cp_omp_serial_publish(frames, n, *status);
	return n;
}

int cp_omp_capture(struct cp_thread *t, struct cp_frame *frames, int cap,
		   enum cp_unwind_status *status)
{
	*status = CP_UNWIND_FAILED;
	int busy = t->busy;
	t->busy = 1; /* a sample landing now is dropped: it would share the unwinder's state */
	int n = cp_unwind_here(frames, cap, status);
	if (n > 0)
		n = cp_omp_splice(t, frames, n, cap, status);
	t->busy = busy;
	return n > 0 ? n : 0;
}
