#include "base/mpi-env.h"

#include <stdlib.h>

static int env_int(const char *name, int *out)
{
	const char *s = getenv(name);
	char *end;
	if (!s || !*s)
		return -1;
	long v = strtol(s, &end, 10);
	if (*end || v < 0 || v > 1 << 30)
		return -1;
	*out = (int)v;
	return 0;
}

int cp_mpi_env_rank(int *size)
{
	static const char *const ranks[] = {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"};
	static const char *const sizes[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE"};
	for (unsigned i = 0; i < sizeof ranks / sizeof ranks[0]; i++) {
		int rank, n = 0;
		if (env_int(ranks[i], &rank))
			continue;
		if (size)
			*size = env_int(sizes[i], &n) || rank >= n ? 0 : n;
		return rank;
	}
	if (size)
		*size = 0;
	return -1;
}
