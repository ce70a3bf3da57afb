/* Planted: lock contention on one of several locks. Four workers (the main thread is the
 * fourth, so that no join wait competes with the planted one) take four locks in turn;
 * each lock guards a short update, except table_lock, under which update_table() works
 * about 300 us. The workers wait for table_lock in update_table() (the
 * pthread_mutex_lock call between the markers); the other locks are hardly contended. */
#include "planted.h"
#include <pthread.h>

#define WORKERS 4

static pthread_mutex_t stats_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t stats, log_len, table, cache;
static double secs, start;
static long rounds;

NOINLINE static void update_stats(uint64_t x)
{
	pthread_mutex_lock(&stats_lock);
	stats += x & 15;
	pthread_mutex_unlock(&stats_lock);
}

NOINLINE static void update_log(uint64_t x)
{
	pthread_mutex_lock(&log_lock);
	log_len += x & 7;
	pthread_mutex_unlock(&log_lock);
}

NOINLINE static void update_table(uint64_t x)
{
	/* planted: begin */
	pthread_mutex_lock(&table_lock);
	/* planted: end */
	table = spin(300000, table + x);
	pthread_mutex_unlock(&table_lock);
}

NOINLINE static void update_cache(uint64_t x)
{
	pthread_mutex_lock(&cache_lock);
	cache ^= x;
	pthread_mutex_unlock(&cache_lock);
}

static void *worker(void *arg)
{
	uint64_t x = (uint64_t)(uintptr_t)arg;
	long n = 0;
	while (planted_now() - start < secs) {
		x = spin(50000, x);
		update_stats(x);
		update_log(x);
		update_table(x);
		update_cache(x);
		n++;
	}
	__atomic_add_fetch(&rounds, n, __ATOMIC_RELAXED);
	return NULL;
}

int main(int argc, char **argv)
{
	secs = planted_seconds(argc, argv);
	start = planted_now();
	pthread_t t[WORKERS - 1];
	for (int i = 0; i < WORKERS - 1; i++)
		pthread_create(&t[i], NULL, worker, (void *)(uintptr_t)(i + 1));
	worker((void *)(uintptr_t)WORKERS);
	for (int i = 0; i < WORKERS - 1; i++)
		pthread_join(t[i], NULL);
	planted_done("lockcontention", rounds, start);
	return (int)((stats + log_len + table + cache) & 0);
}
