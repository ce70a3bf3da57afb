/* Stack bounds per thread and the fallback steps (frame pointer, validated scanning).
 * Signal-time code.
 *
 * cp_unwind_thread_init runs outside signal context (pthread_getattr_np: stack-init.c).
 * Threads first seen inside a signal handler get their bounds from
 * cp_unwind_thread_init_signal_safe:
 * the end of the run of readable pages above sp, found with process_vm_readv(2) on our
 * own pid (fails instead of faulting, honours PROT_NONE guard pages; mincore(2) where
 * that call is not permitted), capped at UW_PROBE_MAX above sp. Stacks other than the
 * thread's own (sigaltstack, makecontext/coroutine stacks) are re-checked on every
 * unwind that starts on them: they can be freed at any time. */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#include "runtime/unwind/modules.h"
#include "runtime/unwind/unwind-internal.h"

#include "base/sigsafe/banned.h"

#define UW_PAGE 4096ul
#define UW_PROBE_MAX (8ul << 20)   /* 8 MiB: the default thread stack size */
#define UW_OTHER_MAX (256ul << 10) /* foreign stacks: probed on every unwind, kept short */
#define UW_SCAN_WORDS 64

static __thread struct uw_thread uw_tls __attribute__((tls_model("initial-exec")));

struct uw_thread *uw_thread_self(void)
{
	return &uw_tls;
}

int cp_unwind_stack(uintptr_t *lo, uintptr_t *hi)
{
	if (!uw_tls.inited)
		return -1;
	*lo = uw_tls.stack_lo;
	*hi = uw_tls.stack_hi;
	return 0;
}

void uw_query_altstack(struct uw_thread *t)
{
	stack_t ss;

	t->alt_lo = t->alt_hi = 0;
	if (sigaltstack(NULL, &ss) == 0 && !(ss.ss_flags & SS_DISABLE) && ss.ss_size) {
		t->alt_lo = (uintptr_t)ss.ss_sp;
		t->alt_hi = t->alt_lo + ss.ss_size;
	}
}

static int mapped(uintptr_t lo, size_t len)
{
	unsigned char vec[UW_PROBE_MAX / UW_PAGE];

	return mincore((void *)lo, len, vec) == 0;
}

/* End of the run of mapped pages starting at base, at most max bytes (mincore: fails
 * with ENOMEM on unmapped pages; blind to PROT_NONE). */
static uintptr_t mapped_end(uintptr_t base, size_t max)
{
	size_t good = UW_PAGE, bad = 0, len;

	if (!mapped(base, UW_PAGE))
		return 0;
	for (len = 2 * UW_PAGE; len <= max; len *= 2) {
		if (!mapped(base, len)) {
			bad = len;
			break;
		}
		good = len;
	}
	if (!bad)
		return base + good; /* capped */
	while (bad - good > UW_PAGE) {
		size_t mid = good + ((bad - good) / 2 & ~(UW_PAGE - 1));
		if (mapped(base, mid))
			good = mid;
		else
			bad = mid;
	}
	return base + good;
}

/* End of the run of *readable* pages starting at base, at most max bytes: reads one byte
 * per page with process_vm_readv(2) on ourselves, which fails instead of faulting and
 * honours PROT_NONE (a neighbouring thread's guard page). Falls back to mincore where the
 * call is not permitted (seccomp). 32 pages per call. */
static uintptr_t readable_end(uintptr_t base, size_t max)
{
	struct iovec remote[32], local;
	char buf[32];
	pid_t pid = getpid();
	size_t done = 0, pages = max / UW_PAGE;

	local.iov_base = buf;
	while (done < pages) {
		size_t n = pages - done < 32 ? pages - done : 32;
		ssize_t got;
		for (size_t i = 0; i < n; i++) {
			remote[i].iov_base = (void *)(base + (done + i) * UW_PAGE);
			remote[i].iov_len = 1;
		}
		local.iov_len = n;
		got = process_vm_readv(pid, &local, 1, remote, n, 0);
		if (got < 0 && done == 0 && (errno == ENOSYS || errno == EPERM))
			return mapped_end(base, max);
		if (got < 0)
			got = 0;
		done += (size_t)got;
		if ((size_t)got < n)
			break;
	}
	return done ? base + done * UW_PAGE : 0;
}

/* The end of sp's stack for a thread first seen in a signal handler, or of a foreign
 * stack: the run of readable pages from sp's page, at most `max` bytes. */
static uintptr_t probe_stack_end(uintptr_t sp, size_t max)
{
	int saved = errno;
	uintptr_t end = readable_end(sp & ~(UW_PAGE - 1), max);

	errno = saved;
	return end;
}

void cp_unwind_thread_init_signal_safe(uintptr_t sp)
{
	struct uw_thread *t = &uw_tls;
	int saved = errno;

	uw_query_altstack(t);
	errno = saved;
	/* sp must be on the thread's own stack: not on its altstack (a handler of the
	 * program's), not unreadable (a corrupt context). Otherwise retry at the next unwind. */
	if (sp >= t->alt_lo && sp < t->alt_hi)
		return;
	t->stack_hi = probe_stack_end(sp, UW_PROBE_MAX);
	t->stack_lo = t->stack_hi ? sp & ~(UW_PAGE - 1) : 0;
	t->inited = t->stack_hi != 0;
}

static int window_set(struct uw_window *w, uintptr_t lo, uintptr_t hi)
{
	if (hi <= lo || hi - lo < sizeof(uintptr_t))
		return -1;
	w->lo = lo;
	w->hi = hi;
	w->span = hi - lo - sizeof(uintptr_t);
	return 0;
}

int uw_window_for(struct uw_window *w, uintptr_t sp)
{
	struct uw_thread *t = &uw_tls;
	uintptr_t end;
	int saved;

	w->t = t;
	w->delta = 0;
	if (t->copy) { /* a stack copy: nothing else is readable */
		if (sp < t->copy_lo || sp >= t->copy_hi)
			return -1;
		w->delta = t->copy_delta;
		return window_set(w, sp, t->copy_hi);
	}
	if (!t->inited)
		cp_unwind_thread_init_signal_safe(sp);
	if (sp >= t->stack_lo && sp < t->stack_hi) /* lives as long as the thread */
		return window_set(w, sp, t->stack_hi);
	/* Anything else may have been unmapped since we looked: the altstack is re-read
	 * (the program may have replaced it), other stacks probed again. */
	saved = errno;
	uw_query_altstack(t);
	errno = saved;
	if (sp >= t->alt_lo && sp < t->alt_hi)
		return window_set(w, sp, t->alt_hi);
	end = probe_stack_end(sp, UW_OTHER_MAX);
	if (!end)
		return -1;
	if (t->stack_hi && sp < t->stack_lo && end >= t->stack_lo) {
		/* Readable all the way up into the thread's known stack: the same stack,
		 * deeper than when its bounds were first probed (lazily seen threads). */
		t->stack_lo = sp & ~(UW_PAGE - 1);
		return window_set(w, sp, t->stack_hi);
	}
	return window_set(w, sp, end); /* a makecontext/coroutine stack */
}

/* Does a call instruction end right before ra? (e8 rel32; ff /2 in its common forms) */
static int follows_call(const uint8_t *ra)
{
	uint8_t m;

	if (ra[-5] == 0xe8)
		return 1;
	m = ra[-1]; /* ff /2 with mod=3, or mod=0 without SIB/disp */
	if (ra[-2] == 0xff && (m & 0x38) == 0x10 &&
	    ((m & 0xc0) == 0xc0 || ((m & 0xc0) == 0 && (m & 7) != 4 && (m & 7) != 5)))
		return 1;
	m = ra[-2]; /* ff /2 disp8 */
	if (ra[-3] == 0xff && (m & 0x38) == 0x10 && (m & 0xc0) == 0x40 && (m & 7) != 4)
		return 1;
	m = ra[-3]; /* ff /2 SIB disp8 */
	if (ra[-4] == 0xff && (m & 0x38) == 0x10 && (m & 0xc7) == 0x44)
		return 1;
	m = ra[-5]; /* ff /2 rip-relative or disp32 */
	if (ra[-6] == 0xff && (m & 0x38) == 0x10 && ((m & 0xc7) == 0x05 || (m & 0xc0) == 0x80))
		return 1;
	m = ra[-6]; /* ff /2 SIB disp32 */
	if (ra[-7] == 0xff && (m & 0x38) == 0x10 && ((m & 0xc7) == 0x84 || (m & 0xc7) == 0x04))
		return 1;
	return 0;
}

/* Copies the 8 code bytes before ra. A candidate return address found by scanning may be
 * a stale word pointing into a library another thread is closing right now (the registry
 * learns of a dlclose only afterwards): outside the main executable (id 0), which is never
 * unmapped, the bytes are read with process_vm_readv, which fails instead of faulting. */
static int code_before(const struct cp_module *m, uintptr_t ra, uint8_t out[8])
{
	struct iovec local = {out, 8}, remote = {(void *)(ra - 8), 8};
	int saved;
	ssize_t got;

	if (m->id == 0 || m->foreign) { /* our executable, or an image mapped read-only */
		memcpy(out, (const void *)(ra - 8 + (uintptr_t)m->image_delta), 8);
		return 0;
	}
	saved = errno;
	got = process_vm_readv(getpid(), &local, 1, &remote, 1, 0);
	if (got < 0 && (errno == ENOSYS || errno == EPERM)) { /* not permitted: read directly */
		memcpy(out, (const void *)(ra - 8), 8);
		got = 8;
	}
	errno = saved;
	return got == 8 ? 0 : -1;
}

int uw_is_return_address(uintptr_t ra)
{
	const struct cp_module *m = cp_modules_find(ra);
	uint8_t code[8];

	if (!m || ra < m->text_lo + 8 || code_before(m, ra, code) < 0)
		return 0;
	return follows_call(code + 8);
}

int uw_step_fp(const struct uw_window *w, struct uw_regs *rg)
{
	uintptr_t fp = rg->r[CP_DW_RBP], ra, next_fp;

	if (!UW_KNOWN(rg, CP_DW_RBP) || fp < rg->r[CP_DW_RSP])
		return -1;
	if (uw_read(w, fp, &next_fp) < 0 || uw_read(w, fp + 8, &ra) < 0)
		return -1;
	if (!uw_is_return_address(ra))
		return -1;
	rg->r[CP_DW_RSP] = fp + 16;
	rg->r[CP_DW_RIP] = ra;
	rg->r[CP_DW_RBP] = next_fp;
	/* A caller's frame lies above ours: anything else is not a frame pointer. */
	rg->known = (1u << CP_DW_RSP) | (1u << CP_DW_RIP);
	if (next_fp > fp)
		rg->known |= 1u << CP_DW_RBP;
	return 0;
}

int uw_step_scan(const struct uw_window *w, struct uw_regs *rg)
{
	uintptr_t sp = (rg->r[CP_DW_RSP] + 7) & ~(uintptr_t)7, word;

	for (int i = 0; i < UW_SCAN_WORDS; i++, sp += 8) {
		if (uw_read(w, sp, &word) < 0)
			return -1;
		if (uw_is_return_address(word)) {
			rg->r[CP_DW_RSP] = sp + 8;
			rg->r[CP_DW_RIP] = word;
			/* rbp stays as it was: if the skipped frames saved it, it is stale, so
			 * only trust it if it still points above the new sp. */
			if (rg->r[CP_DW_RBP] < sp + 8)
				rg->known &= ~(1u << CP_DW_RBP);
			rg->known &= (1u << CP_DW_RSP) | (1u << CP_DW_RIP) | (1u << CP_DW_RBP);
			return 0;
		}
	}
	return -1;
}
