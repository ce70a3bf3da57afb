/* Wait triggers (-e wait): time a thread spends blocked in pthread_mutex_lock,
 * pthread_cond_wait, pthread_cond_timedwait, pthread_barrier_wait, pthread_join, sem_wait
 * and sem_timedwait (the last two are wrapped in interpose/sleep.c, which also restarts
 * them after our samples, and call cp_wait_record from here).
 *
 * Metrics, by the calling context of the call: wait-time (ns blocked), wait-calls (calls
 * that blocked). A mutex is tried first (pthread_mutex_trylock): an uncontended lock costs
 * no clock read and records nothing; only a lock that had to wait is timed. Condition
 * variables, barriers and joins are timed whole (they exist to wait); the time includes
 * re-acquiring the mutex after a condition wait.
 *
 * pthread_mutex_timedlock and pthread_rwlock_rdlock/wrlock are tried first like
 * pthread_mutex_lock; pthread_cond_clockwait (C++ condition_variable::wait_for/until) is
 * timed whole.
 *
 * Not seen: pthread_mutex_clocklock, sem_clockwait, the timed/clock rwlock functions,
 * pthread_spin_lock, pthread_timedjoin_np, futex(2) used directly (C++ std::mutex goes
 * through pthread_mutex_lock, std::shared_mutex through the rwlock functions). */
#include "runtime/core/runtime.h"
#include "runtime/core/sync.h"
#include "runtime/interpose/real.h"

#include <errno.h>
#include <pthread.h>
#include <unistd.h>

const int cp_sync_linked_wait = 1; /* this library interposes -e wait (core/sync.h) */

#define WAIT_ON() CP_SYNC_ENABLED(CP_SYNC_WAIT)

CP_EXPORT int pthread_mutex_lock(pthread_mutex_t *m)
{
	__typeof__(cp_real.pthread_mutex_lock) lock = CP_REAL(pthread_mutex_lock);
	if (!WAIT_ON())
		return lock(m);
	int rc = CP_REAL(pthread_mutex_trylock)(m);
	if (rc != EBUSY) /* taken (or an error the lock would give too) */
		return rc;
	uint64_t t0 = cp_sync_now_ns();
	rc = lock(m);
	cp_wait_record(__builtin_return_address(0), t0);
	return rc;
}

CP_EXPORT int pthread_cond_wait(pthread_cond_t *c, pthread_mutex_t *m)
{
	__typeof__(cp_real.pthread_cond_wait) wait = CP_REAL(pthread_cond_wait);
	if (!WAIT_ON())
		return wait(c, m);
	uint64_t t0 = cp_sync_now_ns();
	int rc = wait(c, m);
	cp_wait_record(__builtin_return_address(0), t0);
	return rc;
}

CP_EXPORT int pthread_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m,
				     const struct timespec *abstime)
{
	__typeof__(cp_real.pthread_cond_timedwait) wait = CP_REAL(pthread_cond_timedwait);
	if (!WAIT_ON())
		return wait(c, m, abstime);
	uint64_t t0 = cp_sync_now_ns();
	int rc = wait(c, m, abstime);
	cp_wait_record(__builtin_return_address(0), t0);
	return rc;
}

CP_EXPORT int pthread_barrier_wait(pthread_barrier_t *b)
{
	__typeof__(cp_real.pthread_barrier_wait) wait = CP_REAL(pthread_barrier_wait);
	if (!WAIT_ON())
		return wait(b);
	uint64_t t0 = cp_sync_now_ns();
	int rc = wait(b);
	cp_wait_record(__builtin_return_address(0), t0);
	return rc;
}

CP_EXPORT int pthread_join(pthread_t th, void **ret)
{
	__typeof__(cp_real.pthread_join) join = CP_REAL(pthread_join);
	if (!WAIT_ON())
		return join(th, ret);
	uint64_t t0 = cp_sync_now_ns();
	int rc = join(th, ret);
	cp_wait_record(__builtin_return_address(0), t0);
	return rc;
}

CP_EXPORT int pthread_mutex_timedlock(pthread_mutex_t *m, const struct timespec *abstime)
{
	__typeof__(cp_real.pthread_mutex_timedlock) lock = CP_REAL(pthread_mutex_timedlock);
	if (!WAIT_ON())
		return lock(m, abstime);
	int rc = CP_REAL(pthread_mutex_trylock)(m);
	if (rc != EBUSY)
		return rc;
	uint64_t t0 = cp_sync_now_ns();
	rc = lock(m, abstime);
	cp_wait_record(__builtin_return_address(0), t0);
	return rc;
}

CP_EXPORT int pthread_cond_clockwait(pthread_cond_t *c, pthread_mutex_t *m, clockid_t clk,
				     const struct timespec *abstime)
{
	__typeof__(cp_real.pthread_cond_clockwait) wait = CP_REAL(pthread_cond_clockwait);
	if (!WAIT_ON())
		return wait(c, m, clk, abstime);
	uint64_t t0 = cp_sync_now_ns();
	int rc = wait(c, m, clk, abstime);
	cp_wait_record(__builtin_return_address(0), t0);
	return rc;
}

CP_EXPORT int pthread_rwlock_rdlock(pthread_rwlock_t *l)
{
	__typeof__(cp_real.pthread_rwlock_rdlock) lock = CP_REAL(pthread_rwlock_rdlock);
	if (!WAIT_ON())
		return lock(l);
	int rc = CP_REAL(pthread_rwlock_tryrdlock)(l);
	if (rc != EBUSY)
		return rc;
	uint64_t t0 = cp_sync_now_ns();
	rc = lock(l);
	cp_wait_record(__builtin_return_address(0), t0);
	return rc;
}

CP_EXPORT int pthread_rwlock_wrlock(pthread_rwlock_t *l)
{
	__typeof__(cp_real.pthread_rwlock_wrlock) lock = CP_REAL(pthread_rwlock_wrlock);
	if (!WAIT_ON())
		return lock(l);
	int rc = CP_REAL(pthread_rwlock_trywrlock)(l);
	if (rc != EBUSY)
		return rc;
	uint64_t t0 = cp_sync_now_ns();
	rc = lock(l);
	cp_wait_record(__builtin_return_address(0), t0);
	return rc;
}
