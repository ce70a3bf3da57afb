/* The table of sample sources. Add a source: write sample/NAME.c defining
 * `const struct cp_sample_source cp_source_NAME`, declare and list it here. */
#include "runtime/sample/source.h"

#include "base/sigsafe/sigsafe.h"
#include "base/sigsafe/banned.h"

extern const struct cp_sample_source cp_source_cputime;
extern const struct cp_sample_source cp_source_realtime;

const struct cp_sample_source *const cp_sample_sources[] = {
    &cp_source_cputime,
    &cp_source_realtime,
    0,
};

const struct cp_sample_source *cp_sample_source_find(const char *name, unsigned len)
{
	for (unsigned i = 0; cp_sample_sources[i]; i++) {
		const char *n = cp_sample_sources[i]->name;
		if (cp_ss_strlen(n) == len && !cp_ss_strncmp(n, name, len))
			return cp_sample_sources[i];
	}
	return 0;
}
