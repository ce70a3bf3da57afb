/* Lock contention with known waits (tests/e2e/record-wait.sh):
 *   holder: takes the mutex, meets waiter at a barrier, sleeps 300 ms holding it
 *   waiter -> wait_for_lock: pthread_mutex_lock blocks ~300 ms
 *   sleeper -> wait_for_signal: pthread_cond_wait until main signals after ~200 ms
 *   main -> wait_for_sem: sem_wait until poster posts ~150 ms after start
 *   rw_reader -> wait_for_rdlock: pthread_rwlock_rdlock blocks ~130 ms (rw_holder holds
 *        the write lock 150 ms)
 *   timeouter -> wait_with_timeout: pthread_cond_clockwait times out after 100 ms
 *   main -> join_all: pthread_join
 * and main -> uncontended: 100000 lock/unlock pairs nobody contends (records nothing). */
#include <pthread.h>
#include <semaphore.h>
#include <time.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t cv_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static pthread_barrier_t barrier;
static int signalled;
static sem_t sem;
static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
static pthread_barrier_t rw_barrier;
static pthread_cond_t never = PTHREAD_COND_INITIALIZER;

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000};
	nanosleep(&ts, NULL);
}

static void *holder(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&lock);
	pthread_barrier_wait(&barrier);
	sleep_ms(300);
	pthread_mutex_unlock(&lock);
	return NULL;
}

__attribute__((noinline)) static void wait_for_lock(void)
{
	pthread_mutex_lock(&lock);
	pthread_mutex_unlock(&lock);
}

static void *waiter(void *arg)
{
	(void)arg;
	pthread_barrier_wait(&barrier);
	sleep_ms(20); /* the holder is inside its sleep by now */
	wait_for_lock();
	return NULL;
}

__attribute__((noinline)) static void wait_for_signal(void)
{
	pthread_mutex_lock(&cv_lock);
	while (!signalled)
		pthread_cond_wait(&cv, &cv_lock);
	pthread_mutex_unlock(&cv_lock);
}

static void *sleeper(void *arg)
{
	(void)arg;
	wait_for_signal();
	return NULL;
}

static void *poster(void *arg)
{
	(void)arg;
	sleep_ms(150);
	sem_post(&sem);
	return NULL;
}

__attribute__((noinline)) static void wait_for_sem(void)
{
	while (sem_wait(&sem))
		;
}

static void *rw_holder(void *arg)
{
	(void)arg;
	pthread_rwlock_wrlock(&rw);
	pthread_barrier_wait(&rw_barrier);
	sleep_ms(150);
	pthread_rwlock_unlock(&rw);
	return NULL;
}

__attribute__((noinline)) static void wait_for_rdlock(void)
{
	pthread_rwlock_rdlock(&rw);
	pthread_rwlock_unlock(&rw);
}

static void *rw_reader(void *arg)
{
	(void)arg;
	pthread_barrier_wait(&rw_barrier);
	sleep_ms(20);
	wait_for_rdlock();
	return NULL;
}

__attribute__((noinline)) static void wait_with_timeout(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	ts.tv_nsec += 100000000;
	if (ts.tv_nsec >= 1000000000)
		ts.tv_sec++, ts.tv_nsec -= 1000000000;
	pthread_mutex_lock(&cv_lock);
	while (pthread_cond_clockwait(&never, &cv_lock, CLOCK_MONOTONIC, &ts) == 0)
		;
	pthread_mutex_unlock(&cv_lock);
}

static void *timeouter(void *arg)
{
	(void)arg;
	wait_with_timeout();
	return NULL;
}

__attribute__((noinline)) static void uncontended(void)
{
	static pthread_mutex_t own = PTHREAD_MUTEX_INITIALIZER;
	for (int i = 0; i < 100000; i++) {
		pthread_mutex_lock(&own);
		pthread_mutex_unlock(&own);
	}
}

__attribute__((noinline)) static void join_all(pthread_t *t, int n)
{
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
}

int main(void)
{
	pthread_t t[7];
	pthread_barrier_init(&barrier, NULL, 2);
	pthread_barrier_init(&rw_barrier, NULL, 2);
	sem_init(&sem, 0, 0);
	pthread_create(&t[0], NULL, holder, NULL);
	pthread_create(&t[1], NULL, waiter, NULL);
	pthread_create(&t[2], NULL, sleeper, NULL);
	pthread_create(&t[3], NULL, poster, NULL);
	pthread_create(&t[4], NULL, rw_holder, NULL);
	pthread_create(&t[5], NULL, rw_reader, NULL);
	pthread_create(&t[6], NULL, timeouter, NULL);
	uncontended();
	wait_for_sem();
	sleep_ms(200);
	pthread_mutex_lock(&cv_lock);
	signalled = 1;
	pthread_cond_signal(&cv);
	pthread_mutex_unlock(&cv_lock);
	join_all(t, 7);
	return 0;
}
