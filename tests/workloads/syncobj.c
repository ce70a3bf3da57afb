/* Waits on several synchronization objects, one of them contended (tests/e2e/
 * report-sync.sh): four workers meet at start_barrier, then each runs ROUNDS rounds of
 *   lock_a: a counter update (hardly contended)
 *   lock_b: held 200 us (sleeping): the contended lock
 *   lock_c: a counter update
 *   heap_lock (malloc'd): held 20 us (sleeping): contended a little
 * and main joins them. Every acquisition tries the lock first and counts the tries that
 * found it taken, so the program knows how many of its acquisitions had to wait; it
 * prints "contended NAME N" for each lock on stdout. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define WORKERS 4
#define ROUNDS 150

pthread_mutex_t lock_a = PTHREAD_MUTEX_INITIALIZER;
pthread_mutex_t lock_b = PTHREAD_MUTEX_INITIALIZER;
pthread_mutex_t lock_c = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t *heap_lock;
static pthread_barrier_t start_barrier;
static long contended[4], counter;

/* Takes m, counting in contended[i] whether it had to wait. */
static __attribute__((noinline)) void take(pthread_mutex_t *m, int i)
{
	if (pthread_mutex_trylock(m) == EBUSY) {
		__atomic_add_fetch(&contended[i], 1, __ATOMIC_RELAXED);
		pthread_mutex_lock(m);
	}
}

static void hold_us(long us)
{
	struct timespec ts = {0, us * 1000};
	nanosleep(&ts, NULL);
}

static void *worker(void *arg)
{
	(void)arg;
	pthread_barrier_wait(&start_barrier);
	for (int r = 0; r < ROUNDS; r++) {
		take(&lock_a, 0);
		counter++;
		pthread_mutex_unlock(&lock_a);
		take(&lock_b, 1);
		hold_us(200);
		pthread_mutex_unlock(&lock_b);
		take(&lock_c, 2);
		counter++;
		pthread_mutex_unlock(&lock_c);
		take(heap_lock, 3);
		hold_us(20);
		counter++;
		pthread_mutex_unlock(heap_lock);
	}
	return NULL;
}

int main(void)
{
	static const char *const names[4] = {"lock_a", "lock_b", "lock_c", "heap_lock"};
	pthread_t t[WORKERS];
	heap_lock = malloc(sizeof *heap_lock);
	pthread_mutex_init(heap_lock, NULL);
	pthread_barrier_init(&start_barrier, NULL, WORKERS);
	for (int i = 0; i < WORKERS; i++)
		pthread_create(&t[i], NULL, worker, NULL);
	for (int i = 0; i < WORKERS; i++)
		pthread_join(t[i], NULL);
	for (int i = 0; i < 4; i++)
		printf("contended %s %ld\n", names[i], contended[i]);
	printf("heap_lock %p\n", (void *)heap_lock);
	free(heap_lock);
	return counter == 3L * WORKERS * ROUNDS ? 0 : 1;
}
