/* Loads libdlwork.so (path in argv[1], default beside the executable), calls dl_work,
 * unloads it, maps something else, loads it again (likely elsewhere) and calls it again. */
#include "common.h"
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

volatile uint64_t workload_sink;

NOINLINE static int call_lib(const char *path, uint64_t units)
{
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		fprintf(stderr, "dlopen: %s\n", dlerror());
		return 1;
	}
	uint64_t (*fn)(uint64_t) = (uint64_t(*)(uint64_t))dlsym(h, "dl_work");
	if (!fn) {
		fprintf(stderr, "dlsym: %s\n", dlerror());
		return 1;
	}
	workload_sink += fn(units);
	dlclose(h);
	return 0;
}

int main(int argc, char **argv)
{
	char path[4096];
	if (argc > 1) {
		snprintf(path, sizeof path, "%s", argv[1]);
	} else {
		snprintf(path, sizeof path, "%s", argv[0]);
		char *slash = strrchr(path, '/');
		snprintf(slash ? slash + 1 : path, sizeof path - (size_t)(slash ? slash + 1 - path : 0),
			 "libdlwork.so");
	}
	uint64_t units = (uint64_t)arg_or(argc, argv, 2, 300000000);
	if (call_lib(path, units))
		return 1;
	/* Occupy the old address range so the second load lands elsewhere. */
	void *hole = mmap(NULL, 1 << 20, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (call_lib(path, units))
		return 1;
	munmap(hole, 1 << 20);
	printf("dlopen done %llu\n", (unsigned long long)(workload_sink & 1));
	return 0;
}
