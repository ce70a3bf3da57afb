/* Did only our own signals interrupt a blocking call? The thread counts deliveries of our
 * signal (our_signals: samples, task scans) and deliveries of the same signal number meant
 * for the program (foreign_signals). A wrapper restarts a call that failed with EINTR when
 * ours moved and foreign did not; other signals the program handles are invisible here,
 * which is the documented limit (docs/internals/runtime.md, "Interrupted sleeps"). */
#ifndef CP_RUNTIME_EINTR_H
#define CP_RUNTIME_EINTR_H

#include "runtime/core/runtime.h"

#include <errno.h>
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

#endif
