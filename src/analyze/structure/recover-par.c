/* A parallel loop over [0, n) with an atomic work counter (no pool: threads live for one
 * call; the structure recovery calls it once per batch of procedures). */
#include "analyze/structure/recover-internal.h"

#include <pthread.h>
#include <stdatomic.h>

#define RC_MAX_THREADS 64

struct par_ctx {
	atomic_size_t next;
	size_t n;
	void (*fn)(void *ctx, size_t k);
	void *ctx;
};

static void *par_worker(void *arg)
{
	struct par_ctx *p = arg;
	for (size_t k; (k = atomic_fetch_add(&p->next, 1)) < p->n;)
		p->fn(p->ctx, k);
	return NULL;
}

void rc_parallel_for(size_t n, unsigned threads, void (*fn)(void *ctx, size_t k), void *ctx)
{
	struct par_ctx p = {.n = n, .fn = fn, .ctx = ctx};
	atomic_init(&p.next, 0);
	pthread_t th[RC_MAX_THREADS];
	unsigned started = 0;
	if (threads > RC_MAX_THREADS)
		threads = RC_MAX_THREADS;
	if (threads > n)
		threads = (unsigned)n;
	/* a thread that cannot be created leaves its share to the others */
	while (started + 1 < threads && !pthread_create(&th[started], NULL, par_worker, &p))
		started++;
	par_worker(&p);
	for (unsigned i = 0; i < started; i++)
		pthread_join(th[i], NULL);
}
