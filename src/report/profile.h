/* A profile loaded from a measurement directory: the run's summary and the top-down
 * calling context tree merged over threads and processes, symbolized through an ops table
 * (the analyzer's symbolizer by default, a fake in unit tests). */
#ifndef CP_REPORT_PROFILE_H
#define CP_REPORT_PROFILE_H

#include "analyze/symbolize.h"
#include "format/measure-read.h"
#include "report/view.h"

struct cp_symops {
	int (*lookup)(void *ctx, const char *path, const uint8_t *build_id, size_t build_id_len,
		      uint64_t offset, int is_return, struct cp_sym_info *out);
	void *ctx;
};

/* Fills ops with the analyzer's symbolizer s (symbolize.h). */
void cp_symops_default(struct cp_symops *ops, struct cp_symbolizer *s);

struct cp_metric_desc {
	char name[32];
	char unit[16];
	uint32_t source, mechanism;
	uint64_t period;
	uint64_t samples; /* over the selected threads */
};

struct cp_summary {
	char *dir;
	char *command; /* the first process image's command line */
	char *host;
	size_t nprocs, nthreads, nthreads_total;
	size_t nforked; /* process images that began as fork children */
	size_t nexeced; /* process images started by a followed exec (gen > 0) */
	size_t nmetrics;
	struct cp_metric_desc metrics[CP_MF_MAX_METRICS];
	uint64_t cpu_ns; /* thread CPU time summed over the selected threads (0 if unknown) */
	size_t threads_without_cpu; /* selected threads that did not record their CPU time */
	uint64_t unwind_complete, unwind_partial, unwind_failed, dropped, frames;
	double duration_s;
	char **notes;
	size_t nnotes;
	char **warnings;
	size_t nwarnings;
};

struct cp_profile {
	struct cp_strpool pool;
	struct cp_summary sum;
	struct cp_view td; /* top-down tree of the selected threads, inclusive values summed */
};

#define CP_PROFILE_ALL_THREADS (-1)

/* Builds the profile of d for the threads with tidx == thread (every thread when
 * CP_PROFILE_ALL_THREADS) of the process pid (every process when 0). */
int cp_profile_build(struct cp_profile *p, const struct cp_mf_dir *d, const struct cp_symops *ops,
		     int thread, int pid);
/* Opens dir and builds its profile with the analyzer's symbolizer. */
int cp_profile_load(struct cp_profile *p, const char *dir, int thread, int pid);
void cp_profile_release(struct cp_profile *p);

#endif
