/* Did only our own signals interrupt a blocking call? The thread counts deliveries of our
 * signal (our_signals: samples, task scans) and deliveries of the same signal number meant
 * for the program (foreign_signals). A wrapper restarts a call that failed with EINTR when
 * ours moved and foreign did not; other signals the program handles are invisible here,
 * which is the documented limit (docs/internals/runtime.md, "Interrupted sleeps"). */
#ifndef CP_RUNTIME_EINTR_H
#define CP_RUNTIME_EINTR_H

#include "runtime/core/runtime.h"

#include <errno.h>
#include <stddef.h>
#include <sys/select.h>
#include <time.h>

struct cp_sig_marks {
	uint64_t ours, foreign;
};

static inline struct cp_sig_marks cp_sig_marks_now(void)
{
	struct cp_thread *t = cp_self;
	struct cp_sig_marks m = {0, 0};
	if (t) {
		m.ours = t->our_signals;
		m.foreign = t->foreign_signals;
	}
	return m;
}

/* For calls returning the error number itself (clock_nanosleep, pthread_*). */
static inline int cp_interrupted_by_us_err(int err, struct cp_sig_marks before)
{
	if (err != EINTR)
		return 0;
	struct cp_sig_marks now = cp_sig_marks_now();
	return now.ours != before.ours && now.foreign == before.foreign;
}

/* For calls returning -1 with errno. */
static inline int cp_interrupted_by_us(int rc, struct cp_sig_marks before)
{
	return rc == -1 && cp_interrupted_by_us_err(errno, before);
}

static inline uint64_t cp_mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* What is left of a relative timeout that began at t0 (never negative). */
static inline struct timespec cp_timespec_left(const struct timespec *timeout, uint64_t t0)
{
	uint64_t total = (uint64_t)timeout->tv_sec * 1000000000ull + (uint64_t)timeout->tv_nsec;
	uint64_t spent = cp_mono_ns() - t0;
	uint64_t left = spent >= total ? 0 : total - spent;
	struct timespec ts = {(time_t)(left / 1000000000ull), (long)(left % 1000000000ull)};
	return ts;
}

/* Milliseconds left of a poll-style timeout that began at t0 (negative = infinite). */
static inline int cp_ms_left(int timeout, uint64_t t0)
{
	if (timeout < 0)
		return timeout;
	uint64_t spent = (cp_mono_ns() - t0) / 1000000u;
	return spent >= (uint64_t)timeout ? 0 : timeout - (int)spent;
}

/* Where the call's timeout is: NULL without one, else *buf set to what remains of the
 * relative timeout that began at t0. */
static inline const struct timespec *cp_timeout_left(const struct timespec *timeout, uint64_t t0,
						     struct timespec *buf)
{
	if (!timeout)
		return NULL;
	*buf = cp_timespec_left(timeout, t0);
	return buf;
}

/* The value of `call` (of type `type`, -1 with errno on failure) made again, each time
 * after the statement `prep`, while only our signals interrupted it (the restarting
 * wrappers: restart.c, sleep.c). */
#define CP_RESTARTED_AFTER(type, prep, call)                                                       \
	({                                                                                         \
		type cp_rc_;                                                                       \
		struct cp_sig_marks cp_before_;                                                    \
		do {                                                                               \
			prep;                                                                      \
			cp_before_ = cp_sig_marks_now();                                           \
			cp_rc_ = (call);                                                           \
		} while (cp_interrupted_by_us(cp_rc_ == -1 ? -1 : 0, cp_before_));                 \
		cp_rc_;                                                                            \
	})

#define CP_RESTARTED(type, call) CP_RESTARTED_AFTER(type, (void)0, call)

/* The same for a call with a relative timeout `timeout` (NULL: none) that began before
 * the first try: `call` passes `cp_left`, what remains of it at each try. */
#define CP_RESTARTED_TIMED(type, timeout, call)                                                    \
	({                                                                                         \
		uint64_t cp_t0_ = cp_mono_ns();                                                    \
		struct timespec cp_left_buf_;                                                      \
		const struct timespec *cp_left;                                                    \
		CP_RESTARTED_AFTER(                                                                \
		    type, cp_left = cp_timeout_left(timeout, cp_t0_, &cp_left_buf_), call);        \
	})

/* The fd sets of select/pselect, kept to be given again to a restarted call (the kernel
 * rewrites them even when it fails with EINTR). */
struct cp_fd_sets {
	fd_set *set[3];
	fd_set copy[3];
};

static inline void cp_fd_sets_keep(struct cp_fd_sets *k, fd_set *r, fd_set *w, fd_set *e)
{
	k->set[0] = r;
	k->set[1] = w;
	k->set[2] = e;
	for (int i = 0; i < 3; i++)
		if (k->set[i])
			k->copy[i] = *k->set[i];
}

static inline void cp_fd_sets_restore(const struct cp_fd_sets *k)
{
	for (int i = 0; i < 3; i++)
		if (k->set[i])
			*k->set[i] = k->copy[i];
}

#endif
