/* Writing an entry jump into code other threads are running: breakpoint first, then the
 * rest, then the first byte (docs/internals/patch.md, "Writing into running code"), with a
 * check of every thread's pc between the two, and the SIGTRAP emulation for threads that
 * meet the breakpoint meanwhile. */
#include "patch/patch.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <linux/membarrier.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/ucontext.h>
#include <time.h>
#include <unistd.h>

#define SITES (1u << 16)	   /* patch sites ever written while threads ran (power of two) */
#define QMAX 4096		   /* threads asked in one round */
#define ROUND_WAIT_NS 200000000ull /* a round waits this long for every answer */
#define RETRY_NS 50000ull	   /* between rounds while a thread is inside the entry */
#define RETRIES 20000		   /* about 2 s at the least */

/* Where a thread that meets our int3 at `addr` continues: the stub (inserting) or the
 * trampoline with the original prologue (removing). Entries are never removed: a thread
 * may take its trap before the window closes and run its handler long after. */
static struct site {
	uint64_t addr;
	uint64_t target;
} sites[SITES];
static int membarrier_state; /* 0 unknown, 1 registered, -1 unavailable */
static int (*ask_fn)(pid_t tid);

/* One round of pc queries. */
static struct query {
	volatile int32_t tid;
	volatile uint32_t round; /* the round this answer belongs to */
	volatile uint64_t pc;
} q[QMAX];
static volatile uint32_t q_n, q_round;
static volatile int32_t q_left; /* answers still awaited (the patcher sleeps on it) */

static struct site *site_slot(uint64_t addr, int create)
{
	uint32_t h = (uint32_t)((addr * 0x9e3779b97f4a7c15ull) >> 48) & (SITES - 1);
	for (uint32_t i = 0; i < SITES; i++, h = (h + 1) & (SITES - 1)) {
		uint64_t a = __atomic_load_n(&sites[h].addr, __ATOMIC_ACQUIRE);
		if (a == addr)
			return &sites[h];
		if (!a) {
			if (!create)
				return NULL;
			return &sites[h];
		}
	}
	return NULL;
}

/* Under the engine's lock (one writer). */
static int site_set(uint64_t addr, uint64_t target)
{
	struct site *s = site_slot(addr, 1);
	if (!s)
		return -1;
	__atomic_store_n(&s->target, target, __ATOMIC_RELEASE);
	__atomic_store_n(&s->addr, addr, __ATOMIC_RELEASE);
	return 0;
}

int cp_patch_trap(void *ucv)
{
	ucontext_t *uc = ucv;
	uint64_t pc = (uint64_t)uc->uc_mcontext.gregs[REG_RIP];
	/* Not the current byte: the window may have closed since this thread trapped. */
	struct site *s = site_slot(pc - 1, 0);
	if (!s)
		return 0;
	uc->uc_mcontext.gregs[REG_RIP] = (greg_t)__atomic_load_n(&s->target, __ATOMIC_ACQUIRE);
	return 1;
}

void cp_patch_set_pc_query(int (*ask)(pid_t tid))
{
	ask_fn = ask;
}

void cp_patch_pc_report(const void *ucv)
{
	const ucontext_t *uc = ucv;
	int32_t tid = (int32_t)syscall(SYS_gettid);
	uint32_t n = q_n, r = q_round;
	for (uint32_t i = 0; i < n && i < QMAX; i++) {
		if (q[i].tid != tid)
			continue;
		uint32_t was = __atomic_load_n(&q[i].round, __ATOMIC_ACQUIRE);
		q[i].pc = (uint64_t)uc->uc_mcontext.gregs[REG_RIP];
		if (was == r || !__atomic_compare_exchange_n(&q[i].round, &was, r, 0,
							     __ATOMIC_RELEASE, __ATOMIC_RELAXED))
			return;
		if (__atomic_sub_fetch(&q_left, 1, __ATOMIC_ACQ_REL) <= 0)
			syscall(SYS_futex, &q_left, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
		return;
	}
}

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void nap(uint64_t ns)
{
	struct timespec ts = {0, (long)ns};
	nanosleep(&ts, NULL);
}

/* The process's threads but this one, from /proc/self/task (getdents64: no malloc).
 * Returns the count, -1 when there are more than QMAX or the directory cannot be read. */
static int list_threads(void)
{
	char buf[4096];
	int32_t self = (int32_t)syscall(SYS_gettid);
	int fd = open("/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	uint32_t n = 0;
	if (fd < 0)
		return -1;
	for (;;) {
		long got = syscall(SYS_getdents64, fd, buf, sizeof buf);
		if (got <= 0) {
			close(fd);
			return got < 0 ? -1 : (int)n;
		}
		for (long off = 0; off < got;) {
			const char *name =
			    buf + off + 19; /* d_ino 8, d_off 8, d_reclen 2, d_type 1 */
			uint16_t reclen;
			memcpy(&reclen, buf + off + 16, 2);
			off += reclen;
			int32_t tid = (int32_t)atoi(name);
			if (tid <= 0 || tid == self)
				continue;
			if (n == QMAX) {
				close(fd);
				return -1;
			}
			q[n++].tid = tid;
		}
	}
}

/* The user pc of thread tid when it is not on a cpu (/proc/self/task/TID/syscall: "NR
 * args sp pc" in a system call, "-1 sp pc" when stopped elsewhere, without waking it).
 * 1: *pc set; 0: running (or unreadable: ask it); -1: gone. */
static int read_pc(int32_t tid, uint64_t *pc)
{
	char path[64], buf[256];
	size_t k = strlen("/proc/self/task/");
	memcpy(path, "/proc/self/task/", k);
	char num[16];
	int d = 0;
	for (int32_t v = tid; v; v /= 10)
		num[d++] = (char)('0' + v % 10);
	while (d)
		path[k++] = num[--d];
	memcpy(path + k, "/syscall", sizeof "/syscall");
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -1 : 0;
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0 || buf[0] == 'r')
		return 0;
	buf[n] = 0;
	char *last = strrchr(buf, ' ');
	if (!last)
		return 0;
	*pc = strtoull(last + 1, NULL, 16);
	return 1;
}

/* Every other thread's pc: read for those not on a cpu, asked of the running ones. 0: every thread
 * answered (or is gone) and none is in [lo, hi); 1: one is; 2: one did not answer in time or the
 * threads cannot be listed. Each delivery also serialises the thread's core. */
static int pc_round(uint64_t lo, uint64_t hi)
{
	q_n = 0;
	int n = list_threads();
	if (n < 0)
		return 2;
	__atomic_store_n(&q_left, n, __ATOMIC_SEQ_CST);
	uint32_t r = __atomic_add_fetch(&q_round, 1, __ATOMIC_SEQ_CST);
	__atomic_store_n(&q_n, (uint32_t)n, __ATOMIC_SEQ_CST);
	for (int i = 0; i < n; i++) {
		uint64_t pc = 0;
		int st = read_pc(q[i].tid, &pc);
		if (st == 0 && ask_fn(q[i].tid)) /* gone (ESRCH) */
			st = -1;
		if (st) { /* a stopped thread's pc, or none: it runs nothing any more */
			q[i].pc = pc;
			__atomic_store_n(&q[i].round, r, __ATOMIC_RELEASE);
			__atomic_sub_fetch(&q_left, 1, __ATOMIC_ACQ_REL);
		}
	}
	uint64_t t0 = now_ns();
	int i = 0;
	while (i < n) {
		if (__atomic_load_n(&q[i].round, __ATOMIC_ACQUIRE) == r) {
			if (q[i].pc >= lo && q[i].pc < hi)
				return 1;
			i++;
			continue;
		}
		if (now_ns() - t0 > ROUND_WAIT_NS)
			return 2;
		int32_t left = __atomic_load_n(&q_left, __ATOMIC_ACQUIRE);
		struct timespec ts = {0, 1000000};
		if (left > 0)
			syscall(SYS_futex, &q_left, FUTEX_WAIT_PRIVATE, left, &ts, NULL, 0);
	}
	return 0;
}

/* Other cores discard what they fetched of the old bytes (the cross-modifying-code rule
 * asks for a serialising instruction on them): membarrier SYNC_CORE, else a signal round
 * (a delivery and its return serialise). */
static void sync_cores(void)
{
	if (membarrier_state == 0) {
		long r = syscall(SYS_membarrier,
				 MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_SYNC_CORE, 0, 0);
		membarrier_state = r == 0 ? 1 : -1;
	}
	if (membarrier_state == 1 &&
	    syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED_SYNC_CORE, 0, 0) == 0)
		return;
	if (ask_fn) /* unavailable, or not registered in this process (a fork child) */
		pc_round(0, 0);
}

void cp_patch_sync_init(void)
{
	sync_cores();
}

/* Waits until no thread's pc is inside bytes 1..4 at addr (none can enter them while the
 * int3 is at byte 0: the plan refuses branches into them, and the return address of a call
 * in the prologue is past byte 5). */
static int wait_outside(uint64_t addr)
{
	for (int k = 0; k < RETRIES; k++) {
		int st = pc_round(addr + 1, addr + CP_PATCH_JMP_LEN);
		if (st == 0)
			return 0;
		nap(RETRY_NS);
	}
	return -1;
}

int cp_patch_poke(uint64_t addr, const uint8_t *bytes, uint64_t target, int check)
{
	volatile uint8_t *code = (volatile uint8_t *)addr;
	uint8_t first = code[0];
	if (!ask_fn)
		return CP_PATCH_BUSY;
	if (site_set(addr, target))
		return CP_PATCH_NO_NEAR_MEMORY;
	code[0] = 0xcc;
	sync_cores();
	if (check && wait_outside(addr)) {
		code[0] = first;
		sync_cores();
		return CP_PATCH_BUSY;
	}
	for (int i = 1; i < CP_PATCH_JMP_LEN; i++)
		code[i] = bytes[i];
	sync_cores();
	code[0] = bytes[0];
	sync_cores();
	return CP_PATCH_OK;
}
