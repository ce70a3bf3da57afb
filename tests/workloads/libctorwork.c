/* A library whose constructor does CPU work (CTORWORK_UNITS spin units, default none):
 * preloaded after callpath's runtime, its constructor runs, sampled, from the dynamic
 * loader's start-up code (_dl_start_user -> _dl_init), which has no CFI. */
#include "common.h"

volatile uint64_t workload_sink;

NOINLINE static uint64_t ctor_work(uint64_t units)
{
	return spin(units, 5);
}

__attribute__((constructor)) static void ctorwork_init(void)
{
	const char *s = getenv("CTORWORK_UNITS");
	if (s)
		workload_sink += ctor_work(strtoull(s, NULL, 0));
}
