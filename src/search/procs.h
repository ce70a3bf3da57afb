/* The process images of a searched program (docs/cmd-search.md, "Processes"): a program
 * started through a wrapper (a shell script, `time`, `env`, a launcher that forks workers)
 * has several; the search measures each live one's share of the hypotheses' metrics and
 * searches the busiest, one at a time.
 *
 * Depends on: format (the measurement directory), search (measure.h's metrics). */
#ifndef CP_SEARCH_PROCS_H
#define CP_SEARCH_PROCS_H

#include "search/measure.h"

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

struct cp_search_proc {
	int pid, ppid;
	unsigned gen;
	int live;	       /* running: not ended, the pid exists, its latest image */
	int control;	       /* its control FIFO is in the directory */
	char *exe;	       /* the executable, or NULL */
	char *command;	       /* its argv, joined (shortened) */
	double value[CP_SM_N]; /* sampled so far: CPU ns, wait ns (+ mpi-time), I/O ns,
				* page faults (count) */
};

struct cp_search_procs {
	struct cp_search_proc *p;
	size_t n;
	double wall; /* CLOCK_MONOTONIC seconds when read */
};

/* The images in dir of the program started by process root (root itself or a
 * descendant: the chain of parent pids the images recorded reaches root, so a process
 * orphaned by its parent's end is still one of them; under an MPI launcher the ranks'
 * images in a shared directory are told apart). 0, or the reader's error. */
int cp_search_procs_read(struct cp_search_procs *ps, const char *dir, int root);
void cp_search_procs_release(struct cp_search_procs *ps);

/* The busiest live image of b with a control channel over (a, b]: the most of the
 * hypotheses' metrics (hyps: a bit per enum cp_hyp; CPU time for CPUBound, waits,
 * I/O time, page faults at 2 us each) sampled in it since a (all of it for an image
 * that a does not have). Ties go to the image started last (a wrapper's child). Its
 * index in b, or -1; *share its fraction of the metrics sampled in b's live images
 * over (a, b] (0 when nothing was sampled). */
long cp_search_procs_busiest(const struct cp_search_procs *a, const struct cp_search_procs *b,
			     unsigned hyps, double *score, double *share);

/* The score of image i of b over (a, b] (as cp_search_procs_busiest ranks them). */
double cp_search_procs_score(const struct cp_search_procs *a, const struct cp_search_procs *b,
			     size_t i, unsigned hyps);

/* CLOCK_MONOTONIC seconds; a sleep of s seconds, cut short once *stop is set (stop may be
 * NULL). */
double cp_search_now(void);
void cp_search_sleep(double s, volatile sig_atomic_t *stop);

#endif
