/* Stub memory near the patched code, and writing entry jumps into running code. */
#include "patch/patch.h"

#include "arch/x86_64/relocate.h"

#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif

#define POOL_SIZE (64u * 1024u)
#define MAX_POOLS 512
#define REACH (1ull << 30) /* a pool is used for functions within 1 GiB of it */
#define STEP (16ull << 20) /* candidate addresses tried when mapping a pool */
#define STUB_LEN 32	   /* push r11 (2) + movabs (10) + jmp (5 or 14), padded */
#define PAGE 4096ull

static struct pool {
	uint64_t base;
	uint32_t used;
} pools[MAX_POOLS];
static volatile unsigned npools;
static pthread_mutex_t patch_lock = PTHREAD_MUTEX_INITIALIZER;

static int within(uint64_t a, uint64_t b, uint64_t d)
{
	return (a > b ? a - b : b - a) < d;
}

int cp_patch_owns(uint64_t addr)
{
	unsigned n = __atomic_load_n(&npools, __ATOMIC_ACQUIRE);
	for (unsigned i = 0; i < n; i++)
		if (addr >= pools[i].base && addr < pools[i].base + POOL_SIZE)
			return 1;
	return 0;
}

/* Maps a pool within REACH of fn: free ranges just below and above it are tried in turn
 * (MAP_FIXED_NOREPLACE never replaces a mapping; old kernels treat it as a hint, so the
 * result is checked). */
static uint64_t map_near(uint64_t fn)
{
	uint64_t page = fn & ~(uint64_t)(POOL_SIZE - 1);
	for (uint64_t k = 1; k * STEP < REACH - POOL_SIZE; k++) {
		for (int dir = 0; dir < 2; dir++) {
			uint64_t hint = dir ? page + k * STEP : page - k * STEP;
			if (!dir && (page < k * STEP || hint < (1ull << 20)))
				continue;
			if (dir && hint >= (1ull << 47) - POOL_SIZE)
				continue;
			void *m = mmap((void *)hint, POOL_SIZE, PROT_READ | PROT_WRITE | PROT_EXEC,
				       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
			if (m == MAP_FAILED)
				continue;
			uint64_t got = (uint64_t)m;
			if (within(got, fn, REACH - POOL_SIZE))
				return got;
			munmap(m, POOL_SIZE);
		}
	}
	return 0;
}

static struct pool *pool_for(uint64_t fn, uint32_t len)
{
	for (unsigned i = 0; i < npools; i++)
		if (within(pools[i].base, fn, REACH - POOL_SIZE) &&
		    pools[i].used + len <= POOL_SIZE)
			return &pools[i];
	if (npools == MAX_POOLS)
		return NULL;
	uint64_t base = map_near(fn);
	if (!base)
		return NULL;
	pools[npools].base = base;
	pools[npools].used = 0;
	__atomic_store_n(&npools, npools + 1, __ATOMIC_RELEASE);
	return &pools[npools - 1];
}

uint64_t cp_patch_alloc_near(uint64_t addr, uint32_t len)
{
	uint64_t at = 0;
	len = (len + 15) & ~15u;
	if (len > POOL_SIZE)
		return 0;
	pthread_mutex_lock(&patch_lock);
	struct pool *p = pool_for(addr, len);
	if (p) {
		at = p->base + p->used;
		p->used += len;
	}
	pthread_mutex_unlock(&patch_lock);
	return at;
}

int cp_patch_fill(uint64_t at, const void *bytes, size_t len)
{
	uint64_t lo = at & ~(PAGE - 1), hi = (at + len + PAGE - 1) & ~(PAGE - 1);
	pthread_mutex_lock(&patch_lock);
	/* Executable throughout: other stubs on these pages may be running. */
	int rc = mprotect((void *)lo, hi - lo, PROT_READ | PROT_WRITE | PROT_EXEC);
	if (!rc) {
		memcpy((void *)at, bytes, len);
		mprotect((void *)lo, hi - lo, PROT_READ | PROT_EXEC);
	}
	pthread_mutex_unlock(&patch_lock);
	return rc ? CP_PATCH_PROTECT : 0;
}

static int entry_jumps_to_us(const uint8_t *code, uint64_t addr)
{
	if (code[0] != 0xe9)
		return 0;
	int32_t rel;
	memcpy(&rel, code + 1, 4);
	return cp_patch_owns(addr + 5 + (int64_t)rel);
}

int cp_patch_prepare(uint64_t addr, size_t size, uint64_t handler, uint64_t cookie,
		     struct cp_patch *p)
{
	const uint8_t *code = (const uint8_t *)addr;
	struct cp_patch_plan plan;
	uint8_t buf[STUB_LEN + CP_PATCH_MAX_TRAMP];
	int rc;

	memset(p, 0, sizeof(*p));
	if (size >= CP_PATCH_JMP_LEN && entry_jumps_to_us(code, addr))
		return CP_PATCH_ALREADY;
	rc = cp_patch_plan(code, size, addr, &plan);
	if (rc)
		return rc;
	uint32_t len = (STUB_LEN + plan.roff[plan.ninsn] + CP_PATCH_JMP_LEN + 15u) & ~15u;

	pthread_mutex_lock(&patch_lock);
	struct pool *pool = pool_for(addr, len);
	if (!pool) {
		rc = CP_PATCH_NO_NEAR_MEMORY;
		goto out;
	}
	uint64_t stub = pool->base + pool->used;
	memset(buf, 0xcc, sizeof(buf));
	buf[0] = 0x41; /* push %r11: the caller's r11 may be live (IPA-RA) */
	buf[1] = 0x53;
	unsigned o = 2 + cp_x86_encode_movabs_r11(buf + 2, cookie);
	if (!cp_x86_encode_jmp32(buf + o, stub + o, handler))
		cp_x86_encode_jmp_abs(buf + o, handler);
	if (!cp_patch_build_trampoline(&plan, code, stub + STUB_LEN, buf + STUB_LEN) ||
	    !cp_x86_rel32_fits(addr + CP_PATCH_JMP_LEN, stub)) {
		rc = CP_PATCH_NO_NEAR_MEMORY;
		goto out;
	}
	/* The pool stays executable throughout: other stubs in it may be running. */
	if (mprotect((void *)pool->base, POOL_SIZE, PROT_READ | PROT_WRITE | PROT_EXEC)) {
		rc = CP_PATCH_PROTECT;
		goto out;
	}
	memcpy((void *)stub, buf, len);
	mprotect((void *)pool->base, POOL_SIZE, PROT_READ | PROT_EXEC);
	pool->used += len;
	p->addr = addr;
	p->stub = stub;
	p->trampoline = stub + STUB_LEN;
	p->n = plan.n;
	memcpy(p->saved, code, CP_PATCH_JMP_LEN);
out:
	pthread_mutex_unlock(&patch_lock);
	return rc;
}

/* Replaces the 5 entry bytes. While other threads run: the breakpoint-first protocol
 * (poke.c), `target` being where a thread that meets the breakpoint continues and `check`
 * whether threads stopped inside the old bytes 1..4 must be waited for. Alone: a plain
 * copy. The page stays executable while writable (code on it may be running). */
static int write_entry(uint64_t addr, const uint8_t *bytes, int concurrent, uint64_t target,
		       int check)
{
	uint64_t lo = addr & ~(PAGE - 1), hi = (addr + CP_PATCH_JMP_LEN + PAGE - 1) & ~(PAGE - 1);
	if (mprotect((void *)lo, hi - lo, PROT_READ | PROT_WRITE | PROT_EXEC))
		return CP_PATCH_PROTECT;
	int rc = CP_PATCH_OK;
	if (concurrent)
		rc = cp_patch_poke(addr, bytes, target, check);
	else
		memcpy((void *)addr, bytes, CP_PATCH_JMP_LEN);
	mprotect((void *)lo, hi - lo, PROT_READ | PROT_EXEC);
	return rc;
}

int cp_patch_commit(struct cp_patch *p, int concurrent)
{
	uint8_t jmp[CP_PATCH_JMP_LEN];
	if (!p->stub || p->committed)
		return p->committed ? CP_PATCH_ALREADY : CP_PATCH_NOT_FUNC;
	if (!cp_x86_encode_jmp32(jmp, p->addr, p->stub))
		return CP_PATCH_NO_NEAR_MEMORY;
	pthread_mutex_lock(&patch_lock);
	int rc = write_entry(p->addr, jmp, concurrent, p->stub, 1);
	pthread_mutex_unlock(&patch_lock);
	if (rc == CP_PATCH_OK)
		p->committed = 1;
	return rc;
}

int cp_patch_revert(struct cp_patch *p, int concurrent)
{
	if (!p->committed)
		return CP_PATCH_OK;
	pthread_mutex_lock(&patch_lock);
	int rc = write_entry(p->addr, p->saved, concurrent, p->trampoline, 0);
	pthread_mutex_unlock(&patch_lock);
	if (rc == CP_PATCH_OK)
		p->committed = 0;
	return rc;
}
