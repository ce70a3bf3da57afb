/* Planted: a hot loop in a shared library loaded with dlopen. main loads
 * libplanted-kernel.so (beside the executable, or the path in argv[2]) after start-up and
 * calls its kernel_apply() every round (about 80 % of the CPU time); setup_rows() in the
 * executable is the cold rest. The library is not known when the program starts. */
#include "planted.h"
#include <dlfcn.h>
#include <string.h>

#define N 8192

static double rows[N];
volatile double planted_sink;

NOINLINE static double setup_rows(int round)
{
	double s = 0;
	for (int i = 0; i < N; i++) {
		rows[i] = rows[i] * 0.5 + (double)((i + round) % 13);
		s += rows[i];
	}
	return s;
}

static void library_path(char *path, size_t size, int argc, char **argv)
{
	if (argc > 2) {
		snprintf(path, size, "%s", argv[2]);
		return;
	}
	snprintf(path, size, "%s", argv[0]);
	char *slash = strrchr(path, '/');
	size_t used = slash ? (size_t)(slash + 1 - path) : 0;
	snprintf(path + used, size - used, "libplanted-kernel.so");
}

int main(int argc, char **argv)
{
	double secs = planted_seconds(argc, argv), start = planted_now();
	char path[4096];
	library_path(path, sizeof path, argc, argv);
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		fprintf(stderr, "dlopen: %s\n", dlerror());
		return 1;
	}
	double (*apply)(double *, int, int) =
	    (double (*)(double *, int, int))dlsym(h, "kernel_apply");
	if (!apply) {
		fprintf(stderr, "dlsym: %s\n", dlerror());
		return 1;
	}
	long rounds = 0;
	double s = 0;
	while (planted_now() - start < secs) {
		s += setup_rows((int)rounds);
		s += apply(rows, N, 8);
		rounds++;
	}
	planted_sink = s;
	dlclose(h);
	planted_done("dlopen", rounds, start);
	return 0;
}
