/* A library the dlopen workload loads, unloads and loads again. */
#include "common.h"

__attribute__((visibility("default"))) NOINLINE uint64_t dl_work(uint64_t units)
{
	return spin(units, 11);
}
