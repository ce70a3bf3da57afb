/* A profile opened for the report: a profile database (db.h) -- read from a file, or made
 * from a measurement directory by cp_profile_open (analyze.h) -- the threads selected
 * (--thread), the run's summary, and the top-down view of the database's scope tree with
 * values summed over the selected threads. Node i of the top-down view is scope i. */
#ifndef CP_REPORT_PROFILE_H
#define CP_REPORT_PROFILE_H

#include "db/db.h"
#include "format/measure.h"
#include "report/view.h"

#include <stdio.h>

struct cp_expr;

struct cp_metric_desc {
	const char *name, *unit;
	const char *formula; /* derived metrics: the formula; NULL for measured ones */
	uint32_t source, mechanism;
	uint64_t period;
	uint64_t samples; /* over the selected threads */
	double total;	  /* over the selected threads: the root's inclusive value */
	size_t nprocs;	  /* probe metrics: procedures holding an exclusive value (called) */
};

struct cp_summary {
	const char *dir;
	const char *command; /* the first process image's command line */
	const char *host;
	size_t nprocs, nthreads, nthreads_total;
	size_t nranks;	       /* MPI ranks measured (0 without MPI) */
	size_t nforked;	       /* process images that began as fork children */
	size_t nexeced;	       /* process images started by a followed exec (gen > 0) */
	size_t nmetrics, nraw; /* every metric of the database; the measured ones come first */
	struct cp_metric_desc *metrics;
	uint64_t cpu_ns; /* thread CPU time summed over the selected threads (0 if unknown) */
	size_t threads_without_cpu; /* selected threads that did not record their CPU time */
	uint64_t unwind_complete, unwind_partial, unwind_failed, dropped, frames;
	double duration_s;
	/* The run's process CPU time and start-up share (db->run), 0 if unknown. */
	uint64_t process_cpu_ns, startup_ns, runtime_ns;
	uint64_t images_cpu_unknown;
	const char *const *notes;
	size_t nnotes;
	const char *const *warnings;
	size_t nwarnings;
	const char *job_text; /* the MPI job's lines for the text summary, or NULL */
};

struct cp_profile {
	struct cp_intern pool;
	struct cp_db db;
	struct cp_summary sum;
	uint8_t *selected;	   /* per database profile: 1 when its thread is shown */
	struct cp_expr **formulas; /* per metric: compiled formula of a derived one, or NULL */
	struct cp_view td;	   /* top-down: node i = scope i, summed over the selected threads;
				    * then a <no line> leaf for each scope with children and costs of
				    * its own (a frame or loop without line information), which holds
				    * those costs, so that every cost of the view is on a leaf */
	uint32_t *own_leaf;	   /* per scope: its <no line> leaf, or UINT32_MAX */
	/* Statistics (cp_profile_view with a stat other than sum) over MPI ranks rather than
	 * threads: a rank's value is the sum over its selected threads (--stat-over ranks). */
	int stat_by_rank;
};

/* A row's inclusive value over the MPI ranks that have it (nonzero), each rank's value the
 * sum over its selected threads: min, mean, max and the rank holding the max. */
struct cp_rank_stat {
	double min, mean, max;
	int argmax; /* rank, -1 when count == 0 */
	uint32_t count;
};
/* For top-down nodes nodes[0..n), metric m, into out[0..n). */
void cp_profile_rank_stats(const struct cp_profile *p, size_t m, const uint32_t *nodes, size_t n,
			   struct cp_rank_stat *out);

#define CP_PROFILE_ALL_THREADS (-1)
/* As the pid of a selection: the program of MPI rank r (the process the launcher started). */
#define CP_PROFILE_RANK(r) (-2 - (r))

/* Takes over the finished database *db (which is left empty) and builds the profile of the
 * threads with tidx == thread (every thread when CP_PROFILE_ALL_THREADS) of the process pid
 * (every process when 0; every thread of it with CP_PROFILE_ALL_THREADS; pid may be
 * CP_PROFILE_RANK(r)). derived: "NAME=FORMULA" metrics to add first (nderived of them).
 * name: what the summary calls the profile (its path). 0 or a negative CP_E* code. */
int cp_profile_from_db(struct cp_profile *p, struct cp_db *db, const char *name, int thread,
		       int pid, const char *const *derived, size_t nderived);
/* Opens path (a database file or a measurement directory, see cp_profile_open) and builds
 * its profile as cp_profile_from_db. progress: analyze's progress messages, or NULL. */
int cp_profile_load(struct cp_profile *p, const char *path, int thread, int pid,
		    const char *const *derived, size_t nderived, FILE *progress, int no_write);
void cp_profile_release(struct cp_profile *p);

/* Evaluates the derived metrics of every node of v from its measured values. */
void cp_profile_eval_derived(const struct cp_profile *p, struct cp_view *v);

/* The view `kind` (enum cp_report_view_kind) of the selected threads with each value the
 * statistic `stat` (enum cp_db_statkind) over those threads: for sum, the sums; for the
 * others, each thread's view is computed on its own and the statistic taken per node over
 * the threads in which the node's value is nonzero (as the database's statistics, so the
 * top-down view's inclusive values are the database's). Derived metrics are their formula
 * over the statistic of their inputs. lim as for the derived views (NULL = everything).
 * out is initialized here. */
void cp_profile_view(const struct cp_profile *p, int kind, int stat,
		     const struct cp_view_limits *lim, struct cp_view *out);

/* Each database profile's own raw values (nraw metrics) of node `node` of the bottom-up or
 * flat view (kind) built of p->td by cp_view_bottom_up_rec / cp_view_flat_rec with
 * contributions rec: what that view of the profile's thread alone holds (0 where it has no
 * such row). incl and excl: nprofiles * nraw values, profile-major. */
void cp_profile_thread_values(const struct cp_profile *p, int kind,
			      const struct cp_view_contribs *rec, uint32_t node, double *incl,
			      double *excl);

/* omp-summary.c: the summary's table of OpenMP regions (the n with the most work), if the
 * database has the OpenMP metrics. */
void cp_report_print_omp(const struct cp_profile *p, FILE *out, size_t n);
/* view-sync.c: the n heaviest synchronization objects of measurement directory dir. */
void cp_report_print_sync_top(const char *dir, FILE *out, size_t n);

#endif
