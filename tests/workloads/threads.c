/* Worker threads: thread i runs worker(weight) with weights 3,1,1,...; the main thread
 * waits in pthread_join. Thread 0 does 3x the work of each other thread. */
#include "common.h"
#include <pthread.h>
#include <stdio.h>

volatile uint64_t workload_sink;

NOINLINE uint64_t crunch(uint64_t units)
{
	return spin(units, units);
}

NOINLINE void *worker(void *arg)
{
	long weight = (long)arg;
	uint64_t r = 0;
	for (long i = 0; i < 100 * weight; i++)
		r += crunch(1000000);
	workload_sink += r;
	return NULL;
}

int main(int argc, char **argv)
{
	int n = (int)arg_or(argc, argv, 1, 4);
	pthread_t t[64];
	if (n > 64)
		n = 64;
	for (int i = 0; i < n; i++)
		pthread_create(&t[i], NULL, worker, (void *)(long)(i == 0 ? 3 : 1));
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	printf("threads done %llu\n", (unsigned long long)(workload_sink & 1));
	return 0;
}
