/* A steady profile for as long as it is watched (tests/e2e/attach-*.sh): for argv[1]
 * seconds (default 30), argv[2] threads (default 2) each call three() and one() in turn,
 * three() doing three times one()'s work: 75% / 25% of the CPU time, at any moment.
 * Creates the file argv[3] (if given) once running; SIGTERM ends it early. Prints
 * "steady done" and exits with status argv[4] (default 0) (timed.h). */
#include "timed.h"

volatile uint64_t workload_sink;

NOINLINE uint64_t one(uint64_t seed)
{
	return spin(100000, seed);
}

NOINLINE uint64_t three(uint64_t seed)
{
	return spin(300000, seed);
}

static void *worker(void *arg)
{
	double end = now() + seconds;
	uint64_t x = (uintptr_t)arg;

	while (!stop && now() < end)
		x += three(x) + one(x);
	workload_sink += x;
	return NULL;
}

int main(int argc, char **argv)
{
	return timed_main(argc, argv, 2, worker, "steady");
}
