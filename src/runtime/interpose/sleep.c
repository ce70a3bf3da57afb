/* Blocking calls our samples may interrupt. A realtime sample landing on a thread that
 * sleeps makes nanosleep/poll/select/epoll_wait return EINTR, which the program never
 * asked for. These wrappers restart the call with the time that remains when the only
 * signals that arrived during it were our samples (the thread's counters tell: a delivery
 * of our signal number for the program counts as foreign; other signals the program
 * handles are not visible to us, which is the documented limit of this heuristic). */
#include "runtime/core/runtime.h"
#include "runtime/interpose/real.h"
#include "runtime/core/sync.h"

#include <errno.h>
#include <time.h>
#include <unistd.h>

struct sig_marks {
	uint64_t ours, foreign;
};

static struct sig_marks marks_now(void)
{
	struct cp_thread *t = cp_self;
	struct sig_marks m = {0, 0};
	if (t) {
		m.ours = t->our_signals;
		m.foreign = t->foreign_signals;
	}
	return m;
}

/* EINTR caused by our samples alone? */
static int interrupted_by_us(int rc, struct sig_marks before)
{
	if (rc != -1 || errno != EINTR)
		return 0;
	struct sig_marks now = marks_now();
	return now.ours != before.ours && now.foreign == before.foreign;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

CP_EXPORT int nanosleep(const struct timespec *req, struct timespec *rem)
{
	typeof(cp_real.nanosleep) real = CP_REAL(nanosleep);
	struct timespec left, r;
	if (!req)
		return real(req, rem);
	left = *req;
	for (;;) {
		struct sig_marks before = marks_now();
		int rc = real(&left, &r);
		if (!interrupted_by_us(rc, before)) {
			if (rc && rem)
				*rem = r;
			return rc;
		}
		left = r;
	}
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
		struct sig_marks before = marks_now();
		int rc = real(clk, flags, &left, &r);
		/* clock_nanosleep returns the error number instead of setting errno. */
		int intr = rc == EINTR;
		if (intr) {
			struct sig_marks now = marks_now();
			intr = now.ours != before.ours && now.foreign == before.foreign;
		}
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

/* Milliseconds left of a timeout that started at t0 (negative timeout = infinite). */
static int timeout_left(int timeout, uint64_t t0)
{
	if (timeout < 0)
		return timeout;
	uint64_t spent = (mono_ns() - t0) / 1000000u;
	return spent >= (uint64_t)timeout ? 0 : timeout - (int)spent;
}

CP_EXPORT int poll(struct pollfd *fds, nfds_t n, int timeout)
{
	typeof(cp_real.poll) real = CP_REAL(poll);
	uint64_t t0 = mono_ns();
	for (;;) {
		struct sig_marks before = marks_now();
		int rc = real(fds, n, timeout_left(timeout, t0));
		if (!interrupted_by_us(rc, before))
			return rc;
	}
}

CP_EXPORT int epoll_wait(int epfd, struct epoll_event *events, int max, int timeout)
{
	typeof(cp_real.epoll_wait) real = CP_REAL(epoll_wait);
	uint64_t t0 = mono_ns();
	for (;;) {
		struct sig_marks before = marks_now();
		int rc = real(epfd, events, max, timeout_left(timeout, t0));
		if (!interrupted_by_us(rc, before))
			return rc;
	}
}

CP_EXPORT int select(int nfds, fd_set *r, fd_set *w, fd_set *e, struct timeval *tv)
{
	typeof(cp_real.select) real = CP_REAL(select);
	fd_set r0, w0, e0;
	if (r)
		r0 = *r;
	if (w)
		w0 = *w;
	if (e)
		e0 = *e;
	for (;;) {
		struct sig_marks before = marks_now();
		int rc = real(nfds, r, w, e, tv); /* Linux updates *tv to the time left */
		if (!interrupted_by_us(rc, before))
			return rc;
		if (r)
			*r = r0;
		if (w)
			*w = w0;
		if (e)
			*e = e0;
	}
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
	for (;;) {
		struct sig_marks before = marks_now();
		int rc = real(sem);
		if (!interrupted_by_us(rc, before)) {
			if (t0)
				cp_wait_record(__builtin_return_address(0), t0);
			return rc;
		}
	}
}

CP_EXPORT int sem_timedwait(sem_t *sem, const struct timespec *abstime)
{
	typeof(cp_real.sem_timedwait) real = CP_REAL(sem_timedwait);
	uint64_t t0 = wait_start(sem);
	if (t0 == 1)
		return 0;
	for (;;) {
		struct sig_marks before = marks_now();
		int rc = real(sem, abstime); /* absolute deadline: retrying keeps it */
		if (!interrupted_by_us(rc, before)) {
			if (t0)
				cp_wait_record(__builtin_return_address(0), t0);
			return rc;
		}
	}
}

CP_EXPORT int pause(void)
{
	typeof(cp_real.pause) real = CP_REAL(pause);
	for (;;) {
		struct sig_marks before = marks_now();
		int rc = real();
		if (!interrupted_by_us(rc, before))
			return rc;
	}
}
