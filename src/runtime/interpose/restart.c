/* More blocking calls that the kernel never restarts after a signal handler, whatever
 * SA_RESTART says (signal(7)): our samples (realtime) and task scans would make them fail
 * with EINTR, which the program never asked for. Each wrapper restarts the call, with the
 * time that remains, when only our signals arrived during it (eintr.h). sleep.c holds
 * the first ones (nanosleep, poll, select, epoll_wait, sem_wait, pause).
 *
 * Not covered: socket calls with SO_RCVTIMEO/SO_SNDTIMEO (wrapping every recv/send would
 * tax network programs), io_getevents and futex waits made with syscall(). */
#include "runtime/core/runtime.h"
#include "runtime/interpose/eintr.h"
#include "runtime/interpose/real.h"

#include <poll.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/msg.h>
#include <sys/select.h>
#include <sys/sem.h>

CP_EXPORT int ppoll(struct pollfd *fds, nfds_t n, const struct timespec *timeout,
		    const sigset_t *mask)
{
	typeof(cp_real.ppoll) real = CP_REAL(ppoll);
	return CP_RESTARTED_TIMED(int, timeout, real(fds, n, cp_left, mask));
}

CP_EXPORT int pselect(int nfds, fd_set *r, fd_set *w, fd_set *e, const struct timespec *timeout,
		      const sigset_t *mask)
{
	typeof(cp_real.pselect) real = CP_REAL(pselect);
	struct cp_fd_sets keep;
	cp_fd_sets_keep(&keep, r, w, e);
	uint64_t t0 = cp_mono_ns();
	struct timespec buf;
	const struct timespec *left;
	return CP_RESTARTED_AFTER(
	    int, (cp_fd_sets_restore(&keep), left = cp_timeout_left(timeout, t0, &buf)),
	    real(nfds, r, w, e, left, mask));
}

CP_EXPORT int epoll_pwait(int epfd, struct epoll_event *ev, int max, int timeout,
			  const sigset_t *mask)
{
	typeof(cp_real.epoll_pwait) real = CP_REAL(epoll_pwait);
	uint64_t t0 = cp_mono_ns();
	return CP_RESTARTED(int, real(epfd, ev, max, cp_ms_left(timeout, t0), mask));
}

CP_EXPORT int epoll_pwait2(int epfd, struct epoll_event *ev, int max,
			   const struct timespec *timeout, const sigset_t *mask)
{
	typeof(cp_real.epoll_pwait2) real = CP_REAL(epoll_pwait2);
	return CP_RESTARTED_TIMED(int, timeout, real(epfd, ev, max, cp_left, mask));
}

CP_EXPORT int sigtimedwait(const sigset_t *set, siginfo_t *info, const struct timespec *timeout)
{
	typeof(cp_real.sigtimedwait) real = CP_REAL(sigtimedwait);
	return CP_RESTARTED_TIMED(int, timeout, real(set, info, cp_left));
}

CP_EXPORT int sigwaitinfo(const sigset_t *set, siginfo_t *info)
{
	typeof(cp_real.sigwaitinfo) real = CP_REAL(sigwaitinfo);
	return CP_RESTARTED(int, real(set, info));
}

/* sigsuspend (and pause, sleep.c) end after *any* handler ran. Restarting them when only
 * our counter moved would lose a program signal that arrived together with one of ours:
 * the program would wait forever for a signal already handled (record-eintr caught it).
 * So our signal is blocked for the duration instead: the program's signals end the wait;
 * ours wait until it is over (a realtime sample then carries the blocked time as timer
 * overruns, at the call site). */
CP_EXPORT int sigsuspend(const sigset_t *mask)
{
	typeof(cp_real.sigsuspend) real = CP_REAL(sigsuspend);
	if (!cp_rt.active)
		return real(mask);
	sigset_t m = *mask;
	sigaddset(&m, cp_rt.signo);
	return real(&m);
}

CP_EXPORT int semop(int id, struct sembuf *ops, size_t n)
{
	typeof(cp_real.semop) real = CP_REAL(semop);
	return CP_RESTARTED(int, real(id, ops, n));
}

CP_EXPORT int semtimedop(int id, struct sembuf *ops, size_t n, const struct timespec *timeout)
{
	typeof(cp_real.semtimedop) real = CP_REAL(semtimedop);
	return CP_RESTARTED_TIMED(int, timeout, real(id, ops, n, cp_left));
}

CP_EXPORT ssize_t msgrcv(int id, void *msg, size_t size, long type, int flags)
{
	typeof(cp_real.msgrcv) real = CP_REAL(msgrcv);
	return CP_RESTARTED(ssize_t, real(id, msg, size, type, flags));
}

CP_EXPORT int msgsnd(int id, const void *msg, size_t size, int flags)
{
	typeof(cp_real.msgsnd) real = CP_REAL(msgsnd);
	return CP_RESTARTED(int, real(id, msg, size, flags));
}
