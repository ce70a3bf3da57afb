/* Blocking calls our samples may interrupt. A realtime sample landing on a thread that
 * sleeps makes nanosleep/poll/select/epoll_wait return EINTR, which the program never
 * asked for. These wrappers restart the call with the time that remains when the only
 * signals that arrived during it were our samples (the thread's counters tell: a delivery
 * of our signal number for the program counts as foreign; other signals the program
 * handles are not visible to us, which is the documented limit of this heuristic). */
#include "runtime/core/runtime.h"
#include "runtime/interpose/eintr.h"
#include "runtime/interpose/real.h"
#include "runtime/core/sync.h"

#include <errno.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

CP_EXPORT int nanosleep(const struct timespec *req, struct timespec *rem)
{
	typeof(cp_real.nanosleep) real = CP_REAL(nanosleep);
	struct timespec left, r;
	if (!req)
		return real(req, rem);
	r = *req; /* each try sleeps what the one before left */
	int rc = CP_RESTARTED_AFTER(int, left = r, real(&left, &r));
	if (rc && rem)
		*rem = r;
	return rc;
}

CP_EXPORT int clock_nanosleep(clockid_t clk, int flags, const struct timespec *req,
			      struct timespec *rem)
{
	typeof(cp_real.clock_nanosleep) real = CP_REAL(clock_nanosleep);
	struct timespec left, r;
	if (!req)
		return real(clk, flags, req, rem);
	left = *req;
	for (;;) {
		struct cp_sig_marks before = cp_sig_marks_now();
		int rc = real(clk, flags, &left, &r);
		/* clock_nanosleep returns the error number instead of setting errno. */
		int intr = cp_interrupted_by_us_err(rc, before);
		if (!intr) {
			if (rc == EINTR && rem && !(flags & TIMER_ABSTIME))
				*rem = r;
			return rc;
		}
		if (!(flags & TIMER_ABSTIME))
			left = r;
	}
}

CP_EXPORT unsigned int sleep(unsigned int seconds)
{
	struct timespec req = {(time_t)seconds, 0}, rem = {0, 0};
	if (nanosleep(&req, &rem) == 0)
		return 0;
	return (unsigned)rem.tv_sec + (rem.tv_nsec > 0);
}

CP_EXPORT int usleep(useconds_t usec)
{
	struct timespec req = {(time_t)(usec / 1000000), (long)(usec % 1000000) * 1000};
	return nanosleep(&req, NULL);
}

CP_EXPORT int poll(struct pollfd *fds, nfds_t n, int timeout)
{
	typeof(cp_real.poll) real = CP_REAL(poll);
	uint64_t t0 = cp_mono_ns();
	return CP_RESTARTED(int, real(fds, n, cp_ms_left(timeout, t0)));
}

CP_EXPORT int epoll_wait(int epfd, struct epoll_event *events, int max, int timeout)
{
	typeof(cp_real.epoll_wait) real = CP_REAL(epoll_wait);
	uint64_t t0 = cp_mono_ns();
	return CP_RESTARTED(int, real(epfd, events, max, cp_ms_left(timeout, t0)));
}

CP_EXPORT int select(int nfds, fd_set *r, fd_set *w, fd_set *e, struct timeval *tv)
{
	typeof(cp_real.select) real = CP_REAL(select);
	struct cp_fd_sets keep;
	cp_fd_sets_keep(&keep, r, w, e);
	/* Linux updates *tv to the time left */
	return CP_RESTARTED_AFTER(int, cp_fd_sets_restore(&keep), real(nfds, r, w, e, tv));
}

/* -e wait (core/sync.h): 1 if the semaphore was taken without waiting, else the
 * start time of a wait to record (0 when the family is off). */
static uint64_t wait_start(sem_t *sem)
{
	if (!CP_SYNC_ENABLED(CP_SYNC_WAIT))
		return 0;
	int saved = errno;
	if (sem_trywait(sem) == 0)
		return 1;
	errno = saved;
	return cp_sync_now_ns();
}

/* sem_wait and pause are never restarted by the kernel (SA_RESTART does not apply). */
CP_EXPORT int sem_wait(sem_t *sem)
{
	typeof(cp_real.sem_wait) real = CP_REAL(sem_wait);
	uint64_t t0 = wait_start(sem);
	if (t0 == 1)
		return 0;
	int rc = CP_RESTARTED(int, real(sem));
	if (t0)
		cp_wait_record(__builtin_return_address(0), t0, sem, CP_MF_SYNC_SEM);
	return rc;
}

CP_EXPORT int sem_timedwait(sem_t *sem, const struct timespec *abstime)
{
	typeof(cp_real.sem_timedwait) real = CP_REAL(sem_timedwait);
	uint64_t t0 = wait_start(sem);
	if (t0 == 1)
		return 0;
	/* absolute deadline: retrying keeps it */
	int rc = CP_RESTARTED(int, real(sem, abstime));
	if (t0)
		cp_wait_record(__builtin_return_address(0), t0, sem, CP_MF_SYNC_SEM);
	return rc;
}

CP_EXPORT int pause(void)
{
	/* pause() is sigsuspend(current mask): through our sigsuspend, which keeps our own
	 * signal from ending (or being mistaken for) the program's wait (restart.c). */
	sigset_t cur;
	if (!cp_rt.active || CP_REAL(pthread_sigmask)(SIG_BLOCK, NULL, &cur))
		return CP_REAL(pause)();
	return sigsuspend(&cur);
}
