/* What `callpath search` reads from the live measurement directory of the program it
 * searches (docs/cmd-search.md): per function and per loop of the code model, the values
 * each hypothesis is decided on, summed over the program's threads, and per thread.
 *
 *   - sampled values (cputime, wait-time, io-time, page-faults): a sample is charged once to
 *     every function and loop on its path (inclusive; a recursive function once);
 *   - probe values: a function's inclusive wall time (probe-time below its outermost probe
 *     nodes) and calls; a loop's loop-time, entries and iterations.
 *
 * Two snapshots subtracted give the values of an interval. Depends on: format, search/graph. */
#ifndef CP_SEARCH_MEASURE_H
#define CP_SEARCH_MEASURE_H

#include "search/graph.h"

#include <stddef.h>
#include <stdint.h>

/* The sampled metrics the hypotheses use. */
enum cp_smetric { CP_SM_CPU = 0, CP_SM_WAIT, CP_SM_IO, CP_SM_FAULTS, CP_SM_N };

struct cp_focus_values {
	double sampled[CP_SM_N]; /* inclusive, ns (page faults: their time, see measure.c) */
	double probe_ns;	 /* functions: probe-time below the outermost probe nodes;
				  * loops: loop-time */
	double calls;		 /* functions: calls; loops: entries */
	double iterations;	 /* loops */
	double own_cpu;		 /* loops: CPU ns sampled in the loop's own code (its
				  * function's frame in it, in none of its nested loops) */
	double entry[CP_SM_N];	 /* functions: samples on whose path it is the outermost
				  * function of the executable after a frame outside it
				  * (main, a thread's start routine, a callback) */
	double leaf[CP_SM_N];	 /* functions: samples whose innermost frame in a module
				  * of the model is this function (Deep Start) */
};

struct cp_search_snap {
	double wall;			/* CLOCK_MONOTONIC seconds when read (or when the
					 * program ended, if it has) */
	double total[CP_SM_N];		/* the program's totals */
	struct cp_focus_values *funcs;	/* [model.nfuncs] */
	struct cp_focus_values *loops;	/* [model.nloops] */
	size_t nthreads;		/* threads with a file (the program's, every one seen) */
	int *tids;			/* [nthreads] */
	double *thread_cpu;		/* [nthreads] sampled CPU ns per thread */
	double *thread_any;		/* [nthreads] every sampled value per thread (activity) */
	double *thread_delay;		/* [nthreads] time waiting for a CPU (schedstat) */
	double *thread_run;		/* [nthreads] time on a CPU (schedstat) */
	double *thread_lost;		/* [nthreads] CPU ns of its dropped samples */
	double *thread_at;		/* [nthreads] when its schedstat was read, or 0 */
	uint8_t *region;		/* [nfuncs] an OpenMP region's outlined function */
	double *thread_vals;		/* [nthreads][nfuncs + nloops][CP_SM_N] sampled values */
	size_t nfuncs, nloops, nfoci;	/* the model's functions, loops, both, when read */
	struct cp_code_seen_call *seen; /* calls on sampled paths the model lacks */
	size_t nseen;
	char **modules;	    /* paths of the process's modules (mapped now) */
	double *module_own; /* [nmodules] values sampled at each one's own instructions */
	size_t nmodules;
	double run_delay_ns; /* live threads' time waiting for a CPU (schedstat) */
	size_t nlive;	     /* threads still running */
	int done;	     /* the program has finished */
	int have[CP_SM_N];   /* the metric is measured */
};

void cp_search_snap_init(struct cp_search_snap *s);
void cp_search_snap_release(struct cp_search_snap *s);
/* Reads the measurement directory dir: the image gen of process pid (gen < 0: its latest),
 * values charged to the model's modules (matched by path), the modules the process maps
 * and the calls seen on its paths that the model lacks. `done` once that image ended
 * (exit, or an exec: the next image is another search's). 0, or the reader's error (a
 * directory still being created: CP_ENOENT). */
int cp_search_snap_read(struct cp_search_snap *s, const struct cp_code_model *m, const char *dir,
			int pid, long gen);
/* Focus values of interval (a, b]: b - a. kind/target as in the graph (a focus the model
 * gained after a was read counts from zero). */
struct cp_focus_values cp_search_snap_delta(const struct cp_search_snap *a,
					    const struct cp_search_snap *b, int kind,
					    uint32_t target);
/* The program's time in (a, b] for waits: wall time times the threads with sampled
 * activity in it (CPU time, waits, I/O, faults: a helper thread blocked all along in a
 * call nothing measures, such as an MPI library's progress thread, does not dilute the
 * others' waits). */
double cp_search_snap_time(const struct cp_search_snap *a, const struct cp_search_snap *b);
/* The runnable time in (a, b]: wall time times the threads that ran (sampled CPU time),
 * minus the time they waited for a CPU (a loaded machine does not make a program less
 * CPU bound): CPUBound's and MemoryBound's. */
double cp_search_snap_cpu_time(const struct cp_search_snap *a, const struct cp_search_snap *b);
/* The sampled value (metric k) of thread tid in focus (kind, target) over (a, b]. */
double cp_search_snap_thread_value(const struct cp_search_snap *a, const struct cp_search_snap *b,
				   int tid, int kind, uint32_t target, int k);
/* OpenMP load imbalance: for a region's outlined function and its outermost loops (the
 * work-shared ones, ended by the team's barrier), the wait the team's imbalance implies
 * over (a, b], as a fraction of the team's time: each thread's time in the focus (its CPU
 * time there stretched by its own wait for a CPU, schedstat) against the busiest
 * thread's, summed over the threads that ran it (tid 0; or thread tid's own), over the
 * team's time (threads times the busiest thread's sampled activity, stretched alike: not
 * wall time, which on a throttled machine holds time neither running nor waiting). 0 for
 * other foci. */
double cp_search_snap_team_wait(const struct cp_search_snap *a, const struct cp_search_snap *b,
				const struct cp_code_model *m, int kind, uint32_t target, int tid);
/* The sampled CPU ns of thread tid in (a, b]. */
double cp_search_snap_thread_cpu(const struct cp_search_snap *a, const struct cp_search_snap *b,
				 int tid);

#endif
