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
 * Each wait also names its synchronization object (the mutex, rwlock, condition variable,
 * barrier or semaphore address, the pthread_t joined) in the thread's sync-object table
 * (cp_wait_record): on the blocked path only, so an uncontended lock costs what it did.
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

/* Defines the wrapper `name` (parameters `params`, arguments `args` in parentheses) that
 * times the whole call, a wait on `obj` of kind `kind` (enum cp_mf_sync_kind). */
#define TIMED_WRAPPER(name, obj, kind, params, args)                                               \
	CP_EXPORT int name params                                                                  \
	{                                                                                          \
		__typeof__(cp_real.name) real = CP_REAL(name);                                     \
		if (!WAIT_ON())                                                                    \
			return real args;                                                          \
		uint64_t t0 = cp_sync_now_ns();                                                    \
		int rc = real args;                                                                \
		cp_wait_record(__builtin_return_address(0), t0, (const void *)(obj), kind);        \
		return rc;                                                                         \
	}

/* Defines the lock wrapper `name` that tries `trylock` on `lk` first: an uncontended lock
 * costs no clock read and records nothing; only one that had to wait is timed. */
#define LOCK_WRAPPER(name, trylock, lk, kind, params, args)                                        \
	CP_EXPORT int name params                                                                  \
	{                                                                                          \
		__typeof__(cp_real.name) real = CP_REAL(name);                                     \
		if (!WAIT_ON())                                                                    \
			return real args;                                                          \
		int rc = CP_REAL(trylock)(lk);                                                     \
		if (rc != EBUSY) /* taken (or an error the lock would give too) */                 \
			return rc;                                                                 \
		uint64_t t0 = cp_sync_now_ns();                                                    \
		rc = real args;                                                                    \
		cp_wait_record(__builtin_return_address(0), t0, lk, kind);                         \
		return rc;                                                                         \
	}

LOCK_WRAPPER(pthread_mutex_lock, pthread_mutex_trylock, m, CP_MF_SYNC_MUTEX, (pthread_mutex_t * m),
	     (m))
LOCK_WRAPPER(pthread_mutex_timedlock, pthread_mutex_trylock, m, CP_MF_SYNC_MUTEX,
	     (pthread_mutex_t * m, const struct timespec *abstime), (m, abstime))
LOCK_WRAPPER(pthread_rwlock_rdlock, pthread_rwlock_tryrdlock, l, CP_MF_SYNC_RDLOCK,
	     (pthread_rwlock_t * l), (l))
LOCK_WRAPPER(pthread_rwlock_wrlock, pthread_rwlock_trywrlock, l, CP_MF_SYNC_WRLOCK,
	     (pthread_rwlock_t * l), (l))

TIMED_WRAPPER(pthread_cond_wait, c, CP_MF_SYNC_COND, (pthread_cond_t * c, pthread_mutex_t *m),
	      (c, m))
TIMED_WRAPPER(pthread_cond_timedwait, c, CP_MF_SYNC_COND,
	      (pthread_cond_t * c, pthread_mutex_t *m, const struct timespec *abstime),
	      (c, m, abstime))
TIMED_WRAPPER(pthread_cond_clockwait, c, CP_MF_SYNC_COND,
	      (pthread_cond_t * c, pthread_mutex_t *m, clockid_t clk,
	       const struct timespec *abstime),
	      (c, m, clk, abstime))
TIMED_WRAPPER(pthread_barrier_wait, b, CP_MF_SYNC_BARRIER, (pthread_barrier_t * b), (b))
TIMED_WRAPPER(pthread_join, th, CP_MF_SYNC_JOIN, (pthread_t th, void **ret), (th, ret))
