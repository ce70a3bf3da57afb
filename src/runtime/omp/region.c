/* The signal-time half of the OpenMP support (omp.h): the trampoline that marks a thread's
 * current region and the splice of a thread's path onto the region's context. */
#include "runtime/omp/omp.h"
#include "runtime/core/runtime.h"

#include "base/sigsafe/banned.h"

/* The trampoline's text: [cp_omp_trampoline, cp_omp_text_end). Its section holds nothing
 * else; the end label sits in subsection 1, which the assembler places after everything
 * the compiler emits there (subsection 0). (The linker's __start_/__stop_ bounds would be
 * exported by the shared library.) */
__asm__(".pushsection cp_omp_text,\"ax\",@progbits\n"
	".subsection 1\n"
	".globl cp_omp_text_end\n"
	".hidden cp_omp_text_end\n"
	"cp_omp_text_end:\n"
	".popsection\n");
extern const char cp_omp_text_end[] __attribute__((visibility("hidden")));

__attribute__((section("cp_omp_text"), noinline)) void cp_omp_trampoline(void *p)
{
	struct cp_omp_region *r = p;
	struct cp_thread *t = cp_self;
	if (!t) {
		r->fn(r->data);
		return;
	}
	const struct cp_omp_region *prev = t->omp_cur;
	t->omp_cur = r;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	r->fn(r->data);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	t->omp_cur = prev;
}

static int in_trampoline(const struct cp_frame *f)
{
	uintptr_t pc = f->pc - (f->kind == CP_FRAME_RETURN);
	uintptr_t lo = (uintptr_t)cp_omp_trampoline;
	return pc - lo < (uintptr_t)cp_omp_text_end - lo;
}

int cp_omp_splice(const struct cp_thread *t, struct cp_frame *frames, int n, int cap,
		  enum cp_unwind_status *status)
{
	const struct cp_omp_region *r = t->omp_cur;
	if (!r || n <= 0)
		return n;
	int i = 0;
	while (i < n && !in_trampoline(&frames[i]))
		i++;
	if (i == n || i >= cap)
		return n;
	frames[i].pc = (uintptr_t)r->fn;
	frames[i].kind = CP_FRAME_REGION;
	frames[i].how = CP_HOW_NONE;
	int m = r->nframes;
	enum cp_unwind_status st = (enum cp_unwind_status)r->status;
	if (m > cap - i - 1) {
		m = cap - i - 1;
		st = CP_UNWIND_PARTIAL;
	}
	__builtin_memcpy(&frames[i + 1], r->frames, (size_t)m * sizeof(frames[0]));
	*status = st;
	return i + 1 + m;
}
