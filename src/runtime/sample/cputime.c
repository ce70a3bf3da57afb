/* cputime: CPU time of each thread.
 *
 * First choice: perf_event task-clock per thread, counted by an hrtimer, so the rate asked
 * is the rate delivered; its overflow signal is routed to the sampled thread with
 * F_SETOWN_EX(F_OWNER_TID) + F_SETSIG + O_ASYNC. Fallback (perf_event_open refused): a
 * POSIX CPU-time timer per thread, which only fires on the kernel tick; the runtime then
 * writes a NOTE, and the delivered rate appears in the summary.
 *
 * Signal-time code (thread start and stop, the handler's claims); the choice between the
 * two at process start is in cputime-init.c. */
#include "runtime/sample/cputime-internal.h"
#include "runtime/sample/timer.h"

#include "runtime/core/fds.h"
#include "runtime/core/runtime.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "base/sigsafe/banned.h"

int cp_cputime_count_kernel = 1;

int cp_cputime_open(uint64_t period, pid_t tid)
{
	struct perf_event_attr attr;
	__builtin_memset(&attr, 0, sizeof attr);
	attr.size = sizeof attr;
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_TASK_CLOCK;
	attr.sample_period = period;
	attr.disabled = 1;
	attr.exclude_kernel = !cp_cputime_count_kernel;
	attr.exclude_hv = 1;
	attr.wakeup_events = 1;
	int fd = (int)syscall(SYS_perf_event_open, &attr, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return -errno;
	return cp_perf_fd_raise(fd);
}

int cp_perf_fd_raise(int fd)
{
	int hi = fcntl(fd, F_DUPFD_CLOEXEC, CP_PERF_FD_FLOOR);
	if (hi >= 0) {
		cp_fd_close(fd);
		fd = hi;
	}
	cp_fd_own(fd);
	return fd;
}

int cp_perf_route(int fd, pid_t tid)
{
	struct f_owner_ex owner = {F_OWNER_TID, tid};
	if (fcntl(fd, F_SETOWN_EX, &owner) || fcntl(fd, F_SETSIG, cp_rt.signo) ||
	    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_ASYNC))
		return -errno;
	return 0;
}

/* Routes the overflow signal to thread tid and starts counting. AS-safe (fcntl, ioctl). */
static int perf_route_to(int fd, pid_t tid)
{
	int rc = cp_perf_route(fd, tid);
	if (rc)
		return rc;
	return ioctl(fd, PERF_EVENT_IOC_ENABLE, 0) ? -errno : 0;
}

/* st is complete before the event counts: its first overflow may come at once (a first
 * period of a few ns is clamped to the kernel's 10 us) on another CPU when tid is not the
 * caller, and an overflow nobody claims leaves the short first period in place for good
 * (the claim restores the period): a thread sampled every 10 us, or, when a sample takes
 * longer, a thread that only runs the handler (attach --inject hung so). */
static int cputime_thread_start(struct cp_metric *m, struct cp_source_thread *st, pid_t tid)
{
	if (m->mechanism == CP_MF_MECH_POSIX_TIMER)
		return cp_timer_thread_start(m, st, tid);
	uint64_t first = cp_first_period(m->period, tid);
	int fd = cp_cputime_open(first, tid);
	if (fd < 0)
		return fd;
	if (ioctl(fd, PERF_EVENT_IOC_ID, &st->perf_id)) {
		int err = errno;
		cp_fd_close(fd);
		return -err;
	}
	st->first_period = first != m->period;
	__atomic_store_n(&st->fd, fd, __ATOMIC_RELEASE);
	int rc = perf_route_to(fd, tid);
	/* A stop that came meanwhile (the thread's end, exit) took and closed it already. */
	if (rc && __atomic_exchange_n(&st->fd, -1, __ATOMIC_ACQ_REL) == fd)
		cp_fd_close(fd);
	return rc;
}

void cp_perf_fd_close(struct cp_source_thread *st, int disable)
{
	/* Exit-time finish and a thread's own end may race: only one closes the fd. */
	int fd = __atomic_exchange_n(&st->fd, -1, __ATOMIC_ACQ_REL);
	uint64_t id = 0;
	if (fd < 0)
		return;
	if (ioctl(fd, PERF_EVENT_IOC_ID, &id) || id != st->perf_id) {
		cp_fd_disown(fd); /* the program's descriptor now: leave it alone */
		return;
	}
	if (disable)
		ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
	cp_fd_close(fd);
}

static void cputime_thread_stop(struct cp_metric *m, struct cp_source_thread *st)
{
	if (m->mechanism == CP_MF_MECH_POSIX_TIMER) {
		cp_timer_thread_stop(m, st);
		return;
	}
	cp_perf_fd_close(st, 1);
}

static int cputime_claims(struct cp_metric *m, struct cp_source_thread *st, const siginfo_t *si,
			  uint64_t *weight)
{
	if (m->mechanism == CP_MF_MECH_POSIX_TIMER)
		return cp_timer_claims(m, st, si, weight);
	if (st->fd < 0 || si->si_fd != st->fd ||
	    (si->si_code != POLL_IN && si->si_code != POLL_HUP))
		return 0;
	if (st->first_period) {
		uint64_t period = m->period;
		st->first_period = 0;
		ioctl(st->fd, PERF_EVENT_IOC_PERIOD, &period);
	}
	*weight = m->period;
	return 1;
}

const struct cp_sample_source cp_source_cputime = {
    .name = "cputime",
    .unit = "ns",
    .source = CP_MF_SRC_CPUTIME,
    .process_init = cp_cputime_process_init,
    .thread_start = cputime_thread_start,
    .thread_stop = cputime_thread_stop,
    .claims = cputime_claims,
};
