/* An uncontended mutex lock/unlock loop (tests/e2e/record-runtime-frames.sh): nearly all
 * of its time is in libc's pthread_mutex_lock and pthread_mutex_unlock (and their PLT
 * stubs), called from lock_loop. Usage: lockloop [PAIRS] (default 100M, about 1 s) */
#include "common.h"

#include <pthread.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

NOINLINE static void lock_loop(long pairs)
{
	for (long i = 0; i < pairs; i++) {
		pthread_mutex_lock(&lock);
		pthread_mutex_unlock(&lock);
	}
}

int main(int argc, char **argv)
{
	lock_loop(arg_or(argc, argv, 1, 100000000));
	return 0;
}
