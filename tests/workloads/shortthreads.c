/* Many short threads: N threads (default 1000), 4 at a time, each spinning about 0.5 ms of
 * CPU in shortwork(). With a second argument "hold", the main thread then spins until it
 * is killed (after printing "threads done"), for tests that kill a run mid-way. */
#include "common.h"
#include <pthread.h>
#include <stdio.h>
#include <string.h>

volatile uint64_t workload_sink;

NOINLINE void *shortwork(void *arg)
{
	workload_sink += spin(500000, (uint64_t)(long)arg);
	return NULL;
}

NOINLINE void hold(void)
{
	for (;;)
		workload_sink += spin(1000000, workload_sink);
}

int main(int argc, char **argv)
{
	long n = arg_or(argc, argv, 1, 1000);
	for (long i = 0; i < n; i += 4) {
		pthread_t t[4];
		int k = 0;
		for (; k < 4 && i + k < n; k++)
			pthread_create(&t[k], NULL, shortwork, (void *)(i + k));
		while (k--)
			pthread_join(t[k], NULL);
	}
	printf("threads done %ld\n", n);
	fflush(stdout);
	if (argc > 2 && !strcmp(argv[2], "hold"))
		hold();
	return 0;
}
