/* Threads the runtime did not see start: created by raw clone/clone3, inside libc without
 * pthread_create's PLT entry, or already running when the runtime initialised.
 *
 * A POSIX timer on the process CPU clock (CLOCK_PROCESS_CPUTIME_ID, so it advances when any
 * thread runs, seen or not; CLOCK_MONOTONIC when a realtime metric is recorded) sends our signal
 * with sival_int = CP_SCAN_MAGIC to the thread that initialised the runtime every CP_SCAN_PERIOD_NS
 * of that clock. Its handler lists /proc/self/task with raw openat/getdents64 and adopts each tid
 * that has no state: control block, thread file and sample sources are created by the scanning
 * thread with the signal routed to that tid (perf_event_open(pid = tid) + F_OWNER_TID, or a timer
 * with SIGEV_THREAD_ID on that thread's CPU clock). The adopted thread's samples find their state
 * by tid, since its TLS may be its creator's (clone without CLONE_SETTLS).
 *
 * A tid is adopted only when two consecutive scans saw it without state: a thread started
 * by pthread_create appears in /proc a moment before its trampoline registers it. At
 * process start every other thread is adopted at once (none went through our wrapper). */
#include "runtime/core/runtime.h"

#include <fcntl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "base/sigsafe/sigsafe.h"
#include "base/sigsafe/banned.h"

#define CP_SCAN_PERIOD_NS 100000000ull /* 100 ms of process CPU time */

struct linux_dirent64 {
	uint64_t d_ino;
	int64_t d_off;
	unsigned short d_reclen;
	unsigned char d_type;
	char d_name[];
};

/* Scan state: only one scan at a time (the flag), so static buffers are safe. */
static int scanning;
static char dents[4096] __attribute__((aligned(8)));
static pid_t candidates[CP_MAX_ADOPTED], next_candidates[CP_MAX_ADOPTED];
static uint32_t ncandidates;

static pid_t parse_tid(const char *s)
{
	int64_t v = 0;
	if (!*s)
		return -1;
	for (; *s; s++) {
		if (*s < '0' || *s > '9' || v > 0x7fffffff / 10)
			return -1;
		v = v * 10 + (*s - '0');
	}
	return (pid_t)v;
}

static int tid_known(pid_t tid)
{
	if (tid == __atomic_load_n(&cp_rt.control_tid, __ATOMIC_ACQUIRE))
		return 1; /* the control channel's thread (core/control.c) is not the program's */
	uint32_t hw = __atomic_load_n(&cp_rt.tids_hw, __ATOMIC_ACQUIRE);
	for (uint32_t i = 0; i < hw; i++)
		if (__atomic_load_n(&cp_rt.tids[i], __ATOMIC_ACQUIRE) == tid)
			return 1;
	return 0;
}

static int was_candidate(pid_t tid)
{
	for (uint32_t i = 0; i < ncandidates; i++)
		if (candidates[i] == tid)
			return 1;
	return 0;
}

/* One tid listed in /proc/self/task; *n counts the next scan's candidates. */
static void scan_tid(pid_t tid, int immediate, uint32_t *n)
{
	if (tid <= 0 || tid_known(tid))
		return;
	if (immediate || was_candidate(tid))
		cp_thread_adopt(tid);
	else if (*n < CP_MAX_ADOPTED)
		next_candidates[(*n)++] = tid;
}

void cp_adopt_scan(int immediate)
{
	if (!cp_rt.active || !cp_rt.enabled || cp_rt.finished ||
	    __atomic_exchange_n(&scanning, 1, __ATOMIC_ACQUIRE))
		return;
	int fd = (int)syscall(SYS_openat, AT_FDCWD, "/proc/self/task",
			      O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	uint32_t n = 0;
	if (fd >= 0) {
		long got;
		while ((got = syscall(SYS_getdents64, fd, dents, sizeof dents)) > 0) {
			for (long off = 0; off < got;) {
				struct linux_dirent64 *e = (struct linux_dirent64 *)(dents + off);
				scan_tid(parse_tid(e->d_name), immediate, &n);
				off += e->d_reclen;
			}
		}
		syscall(SYS_close, fd);
	}
	cp_ss_memcpy(candidates, next_candidates, n * sizeof candidates[0]);
	ncandidates = n;
	__atomic_store_n(&scanning, 0, __ATOMIC_RELEASE);
}

/* Outside signal context: process start (after the first thread began) or fork child. */
void cp_adopt_start(void)
{
	ncandidates = 0;
	cp_adopt_scan(1);
	struct sigevent sev;
	int id = -1;
	cp_ss_memset(&sev, 0, sizeof sev);
	sev.sigev_notify = SIGEV_THREAD_ID;
	sev.sigev_signo = cp_rt.signo;
	sev.sigev_value.sival_int = CP_SCAN_MAGIC;
	sev._sigev_un._tid = cp_ss_gettid();
	/* With a wall-clock metric, threads that only wait must be found too. */
	clockid_t clock = CLOCK_PROCESS_CPUTIME_ID;
	for (uint32_t i = 0; i < cp_rt.nmetrics; i++)
		if (!cp_rt.metrics[i].disabled &&
		    cp_rt.metrics[i].src->source == CP_MF_SRC_REALTIME)
			clock = CLOCK_MONOTONIC;
	if (syscall(SYS_timer_create, clock, &sev, &id)) {
		cp_rt_note("thread scan: timer_create failed; threads not started through "
			   "pthread_create are not measured");
		return;
	}
	struct itimerspec its;
	its.it_interval.tv_sec = 0;
	its.it_interval.tv_nsec = (long)CP_SCAN_PERIOD_NS;
	its.it_value = its.it_interval;
	if (syscall(SYS_timer_settime, id, 0, &its, NULL)) {
		syscall(SYS_timer_delete, id);
		return;
	}
	cp_rt.scan_timer = id;
	__atomic_store_n(&cp_rt.scan_timer_valid, 1, __ATOMIC_RELEASE);
}

/* AS-safe (the crash path runs it too). */
void cp_adopt_stop(void)
{
	if (__atomic_exchange_n(&cp_rt.scan_timer_valid, 0, __ATOMIC_ACQ_REL))
		syscall(SYS_timer_delete, cp_rt.scan_timer);
}
