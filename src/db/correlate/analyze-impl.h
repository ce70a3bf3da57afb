/* Private to src/db/correlate: the state of one analysis (analyze.c) and the pieces its
 * workers correlate (analyze-part.c). */
#ifndef CP_DB_CORRELATE_ANALYZE_IMPL_H
#define CP_DB_CORRELATE_ANALYZE_IMPL_H

#include "db/analyze.h"
#include "db/correlate/correlate.h"
#include "format/measure-read.h"

#include <pthread.h>

/* Threads lo..hi-1 (in cp_mf_list_thread order) of one process image. */
struct unit {
	size_t image, lo, hi;
	uint64_t weight; /* bytes of thread data, for balancing */
};

struct cp_analysis {
	/* The time metric whose OpenMP waits and work are split into omp-wait and omp-work
	 * (name empty: none): decided by the scan, the same for every piece. */
	struct cp_mf_metric omp_from;
	const char *dir;
	const struct cp_analyze_options *o;
	struct cp_mf_list list;
	struct cp_db *db;     /* the database cp_analysis_begin scanned into, or NULL */
	struct cp_corr *corr; /* correlator of db */
	struct unit *units;   /* every thread of every image, after the scan */
	size_t nunits;
	size_t ncrashed, nunfinished, ndisabled;
	uint64_t t_lo, t_hi;
	pthread_mutex_t struct_lock; /* one structure lookup (or recovery) at a time */
	struct cp_corr_stats stats;  /* summed over the pieces */
	double t_scan, t_correlate, w_correlate;
	/* cp_analysis_parallel: thread CPU time of the pieces and of merging them */
	double piece_cpu_max, piece_cpu_min, merge_cpu;
	unsigned npieces;
	struct cp_analyze_options defaults; /* o when cp_analysis_begin got NULL */
};

/* Correlates units[0..n) into db with corr (NULL: a correlator of its own). Thread-safe
 * against other calls on other databases. 0 or a negative CP_E* code with cp_error() set
 * in the calling thread. */
int cp_analysis_units(struct cp_analysis *a, const struct unit *units, size_t n, struct cp_db *db,
		      struct cp_corr *corr);

/* Correlates every unit with `jobs` threads: the first piece into a->db, the others into
 * databases of their own merged into it in order. */
int cp_analysis_parallel(struct cp_analysis *a, unsigned jobs);

/* The metric of a process file's metric in db (created, by name, when new). */
uint32_t cp_analysis_metric(struct cp_db *db, const struct cp_mf_metric *m);

/* Number of threads for structure recovery and correlation: o->jobs or the CPUs. */
unsigned cp_analysis_jobs(const struct cp_analyze_options *o);

/* Database modules (through corr) of a process image's modules, by index (caller frees). */
uint32_t *cp_analysis_modmap(struct cp_corr *corr, const struct cp_mf_proc *p);

/* A warning for the database's run (formatted, up to about 1 KB). */
void cp_analysis_warn(struct cp_db *db, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* In db, the metrics omp-wait, omp-work and omp-idle and, when a->omp_from is set, corr's
 * split of it into them (cp_corr_omp_wait, cp_corr_omp_idle). 0 or a negative CP_E* code. */
int cp_analysis_omp(struct cp_analysis *a, struct cp_db *db, struct cp_corr *corr);

/* The command line of a process image, shell-quoted (caller frees). */
char *cp_analysis_command_line(const struct cp_mf_proc *p);

#endif
