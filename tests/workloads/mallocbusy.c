/* Every thread busy in the allocator (tests/e2e/attach-inject-malloc.sh: injecting the
 * runtime must never deadlock on the allocator's or the loader's locks): argv[2] threads
 * (default 4, the main one included) allocate and free blocks of varied sizes (small ones
 * from the thread cache, large ones through the arenas' locks and mmap) until SIGTERM or
 * argv[1] seconds (default 30). Creates the file argv[3] (if given) once running. Prints
 * "mallocbusy done" and exits with status argv[4] (default 0) (timed.h). */
#include "timed.h"
#include <stdlib.h>
#include <string.h>

volatile uint64_t workload_sink;

static void *worker(void *arg)
{
	enum { SLOTS = 64 };
	void *slot[SLOTS] = {0};
	uint64_t x = (uintptr_t)arg * 2654435761u + 1;
	double end = now() + seconds;
	for (unsigned long i = 0; !stop && ((i & 1023) || now() < end); i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		unsigned k = (unsigned)(x >> 58) % SLOTS;
		size_t size =
		    (x >> 20) % 8 == 0 ? 64 * 1024 + (x >> 40) % 300000 : 16 + (x >> 40) % 2000;
		free(slot[k]);
		slot[k] = malloc(size);
		if (slot[k])
			memset(slot[k], (int)i, size < 64 ? size : 64);
	}
	for (unsigned k = 0; k < SLOTS; k++)
		free(slot[k]);
	workload_sink += x;
	return NULL;
}

int main(int argc, char **argv)
{
	return timed_main(argc, argv, 4, worker, "mallocbusy");
}
