/* Stack bounds per thread and the fallback steps (frame pointer, validated scanning).
 *
 * cp_unwind_thread_init runs outside signal context (pthread_getattr_np). Threads first
 * seen inside a signal handler get their bounds from cp_unwind_thread_init_signal_safe:
 * the end of the mapping that holds sp, found by probing with mincore(2) (which fails
 * with ENOMEM on unmapped pages instead of faulting), capped at UW_PROBE_MAX above sp. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>

#include "runtime/unwind/modules.h"
#include "runtime/unwind/unwind-internal.h"

#pragma GCC poison malloc calloc realloc free printf fprintf sprintf snprintf

#define UW_PAGE 4096ul
#define UW_PROBE_MAX (8ul << 20) /* 8 MiB: the default thread stack size */
#define UW_SCAN_WORDS 64

static __thread struct uw_thread uw_tls __attribute__((tls_model("initial-exec")));

struct uw_thread *uw_thread_self(void)
{
	return &uw_tls;
}

static void query_altstack(struct uw_thread *t)
{
	stack_t ss;

	t->alt_lo = t->alt_hi = 0;
	if (sigaltstack(NULL, &ss) == 0 && !(ss.ss_flags & SS_DISABLE) && ss.ss_size) {
		t->alt_lo = (uintptr_t)ss.ss_sp;
		t->alt_hi = t->alt_lo + ss.ss_size;
	}
}

void cp_unwind_thread_init(void)
{
	struct uw_thread *t = &uw_tls;
	pthread_attr_t attr;
	void *addr;
	size_t size;

	if (pthread_getattr_np(pthread_self(), &attr) != 0) {
		cp_unwind_thread_init_signal_safe((uintptr_t)__builtin_frame_address(0));
		return;
	}
	if (pthread_attr_getstack(&attr, &addr, &size) == 0) {
		t->stack_lo = (uintptr_t)addr;
		t->stack_hi = (uintptr_t)addr + size;
	}
	pthread_attr_destroy(&attr);
	query_altstack(t);
	t->inited = 1;
}

static int mapped(uintptr_t lo, size_t len)
{
	unsigned char vec[UW_PROBE_MAX / UW_PAGE];

	return mincore((void *)lo, len, vec) == 0;
}

/* End of the run of mapped pages starting at sp's page, at most UW_PROBE_MAX bytes. */
static uintptr_t probe_mapping_end(uintptr_t sp)
{
	uintptr_t base = sp & ~(UW_PAGE - 1);
	size_t good = UW_PAGE, bad = 0, len;
	int saved = errno;

	if (!mapped(base, UW_PAGE)) {
		errno = saved;
		return 0;
	}
	for (len = 2 * UW_PAGE; len <= UW_PROBE_MAX; len *= 2) {
		if (!mapped(base, len)) {
			bad = len;
			break;
		}
		good = len;
	}
	if (!bad)
		bad = good; /* capped */
	while (bad - good > UW_PAGE) {
		size_t mid = good + ((bad - good) / 2 & ~(UW_PAGE - 1));
		if (mapped(base, mid))
			good = mid;
		else
			bad = mid;
	}
	errno = saved;
	return base + good;
}

void cp_unwind_thread_init_signal_safe(uintptr_t sp)
{
	struct uw_thread *t = &uw_tls;
	int saved = errno;

	t->stack_lo = sp & ~(UW_PAGE - 1);
	t->stack_hi = probe_mapping_end(sp);
	if (!t->stack_hi)
		t->stack_lo = 0;
	query_altstack(t);
	errno = saved;
	t->inited = 1;
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

	w->t = t;
	if (!t->inited)
		cp_unwind_thread_init_signal_safe(sp);
	if (sp >= t->stack_lo && sp < t->stack_hi)
		return window_set(w, sp, t->stack_hi);
	if (sp >= t->alt_lo && sp < t->alt_hi)
		return window_set(w, sp, t->alt_hi);
	if (!(sp >= t->other_lo && sp < t->other_hi)) {
		int saved = errno;
		query_altstack(t); /* the program may have set one since */
		errno = saved;
		if (sp >= t->alt_lo && sp < t->alt_hi)
			return window_set(w, sp, t->alt_hi);
		t->other_lo = sp & ~(UW_PAGE - 1);
		t->other_hi = probe_mapping_end(sp);
		if (!t->other_hi) {
			t->other_lo = 0;
			return -1;
		}
	}
	return window_set(w, sp, t->other_hi);
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

int uw_is_return_address(uintptr_t ra)
{
	const struct cp_module *m = cp_modules_find(ra);

	if (!m || ra < m->text_lo + 8)
		return 0;
	return follows_call((const uint8_t *)ra);
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
