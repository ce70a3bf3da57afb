/* The Performance Consultant's experiment loop (docs/cmd-search.md): hypotheses tested on
 * foci of the code model while the program runs, probes inserted and removed through the
 * control channel, values read from the live measurement directory, true foci refined with
 * the loop-aware rule (graph.h), the probes' cost kept under a limit.
 *
 * Depends on: search (graph, measure, loops), record (control client), analyze. */
#ifndef CP_SEARCH_SEARCH_H
#define CP_SEARCH_SEARCH_H

#include "search/graph.h"
#include "search/measure.h"

#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>

enum cp_hyp { CP_HYP_CPU = 0, CP_HYP_SYNC, CP_HYP_IO, CP_HYP_MEM, CP_HYP_N };

extern const char *const cp_hyp_names[CP_HYP_N];
/* The hypothesis of that name, or -1. */
int cp_hyp_find(const char *name);
/* The event `callpath record -e` needs for hypothesis h, NULL for CPU time (always on). */
const char *cp_hyp_event(int h);

struct cp_symbolizer;
struct cp_structure;

/* Which shared libraries of the program enter the code model (docs/cmd-search.md). */
enum cp_search_libs {
	CP_LIBS_NONE = 0, /* the executable only */
	CP_LIBS_USER,	  /* and libraries outside the system's library directories */
	CP_LIBS_ALL	  /* and every library (callpath's runtime and the loader aside) */
};
/* Does a module at path enter the model under policy libs? */
int cp_search_module_wanted(const char *path, int libs);

/* The probes' per-execution costs (calib.c, docs/cmd-search.md "Cost limit"). */
struct cp_search_costs {
	int calibrated;			 /* measured on this machine; else run.c's constants */
	double per_call_ns, per_edge_ns; /* an entry probe's call, a loop snippet's execution */
	double wall_s, cpu_s;		 /* the calibration's wall and CPU time */
	char why[256];			 /* not calibrated: why ("" under --no-calibrate) */
};

/* The calibration, in a thread of its own while the program starts and the search begins
 * (so that it never delays the search; the constants serve until it is done): the
 * calibration program at prog (callpath-calibrate) runs under the runtime at runtime; it
 * measures the CPU time per call of a tiny function with its entry probe and without, per
 * iteration of a tight loop with its loop probes and without, medians of a few repetitions
 * (~0.3 s of CPU time). */
struct cp_search_calib {
	pthread_t thread;
	int started;
	volatile int stop; /* set by cp_search_calib_finish(.., 1) */
	sigset_t mask;	   /* the creator's signal mask (the calibration program's) */
	int done;	   /* atomic: costs is final */
	struct cp_search_costs costs;
	char prog[PATH_MAX], runtime[PATH_MAX];
};
/* Starts j's thread; -1 when it cannot (j is done, j->costs.why says why). */
int cp_search_calib_start(struct cp_search_calib *j, const char *prog, const char *runtime);
/* 1 with *c the result when j is done (c->calibrated 0 and c->why set: a failure or a
 * nonsense value), else 0. j may be NULL (never done). */
int cp_search_calib_poll(struct cp_search_calib *j, struct cp_search_costs *c);
/* Waits for j's thread; abandon: makes it give up first (the search ended). */
void cp_search_calib_finish(struct cp_search_calib *j, int abandon);

struct cp_search_opts {
	double threshold;	       /* fraction of the program's time (0.2) */
	double cost_limit;	       /* fraction (0.05) */
	unsigned hyps;		       /* bit per enum cp_hyp */
	double after;		       /* seconds before the search starts */
	double for_s;		       /* longest search (0: until nothing is pending) */
	double interval;	       /* seconds per experiment */
	int deep_start;		       /* run the sampling phase first */
	int libraries;		       /* enum cp_search_libs (CP_LIBS_USER) */
	FILE *progress;		       /* a line per decision, or NULL */
	volatile sig_atomic_t *stop;   /* set (by a signal handler) to end the search, or NULL */
	struct cp_search_costs costs;  /* the probes' costs (not calibrated: the constants) */
	struct cp_search_calib *calib; /* costs are taken from it when it is done, or NULL */
};

void cp_search_opts_init(struct cp_search_opts *o);

/* What a node carries besides the graph's fields. */
struct cp_search_info {
	double calls, iterations, probe_ns; /* the probes' values over its experiment */
	double started;			    /* seconds since the search began */
	char *note;			    /* why its focus could not be patched, or NULL */
	char *file;			    /* source of the function's entry or the loop */
	int line, line_end;		    /* loop: its line and the extent's last line */
};

struct cp_search {
	struct cp_search_opts o;
	struct cp_code_model model;
	struct cp_search_graph graph;
	struct cp_search_info *info; /* [graph.n] */
	size_t ninfo, info_alloc;
	char exe[PATH_MAX], dir[PATH_MAX];
	int pid;
	long gen;	   /* the image of pid searched (-1: its latest); its end ends the search */
	int multi;	   /* the program has several process images: foci name the process */
	char command[256]; /* the searched process's command line, or "" */
	char reason[256];  /* why that process was chosen, or "" */
	double t0;	   /* CLOCK_MONOTONIC at the start of the search */
	double elapsed;	   /* seconds the search ran */
	double per_call_ns, per_edge_ns; /* calibrated probe costs */
	int costs_pending;		 /* the calibration (o.calib) is still running */
	double cost_max, cost_last;	 /* fraction of time: highest and last interval */
	double cost_sum;		 /* cost fraction times seconds, over the rounds */
	int *tids;			 /* Machine foci: thread index -> tid */
	size_t ntids;
	char host[64];
	size_t experiments, intervals, queued_rounds;
	int program_exited, stopped_by_for, interrupted;
	char **notes;
	size_t nnotes;
	struct cp_symbolizer *sym;
	struct cp_structure *structs; /* [model.nmodules] `callpath struct` of each module */
	uint8_t *struct_state;	      /* [model.nmodules] 0 not read, 1 read, 2 unusable */
	size_t nstructs;
	struct cp_search_sync *syncobj; /* the SyncObject hierarchy (syncobj.h), or NULL */
};

/* Starts the search of process pid (running under record with the control channel and
 * loop probes allowed) whose measurement directory is dir and executable exe. The model is
 * built from exe. Its latest image is searched unless s->gen is set after this. 0, or an
 * error (CP_E*) with cp_error() set. */
int cp_search_init(struct cp_search *s, const struct cp_search_opts *o, int pid, const char *dir,
		   const char *exe);
/* Runs the search to its end: nothing queued or pending, --for reached, or the program
 * ended (s->program_exited; the partial result is kept). 0, or an error. */
int cp_search_run(struct cp_search *s);
void cp_search_release(struct cp_search *s);

/* Internal to src/search: a note of the search (printf format; also said on progress),
 * and info[] grown to the graph's nodes (their source positions looked up). */
void cp_search_note(struct cp_search *s, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void cp_search_sync_info(struct cp_search *s);
/* The index of thread tid in s->tids (added when new). */
int32_t cp_search_thread_index(struct cp_search *s, int tid);

/* Output (output.c). Bottlenecks: true nodes, leaves of the true subgraph first, each by
 * value; n written to out (indices), at most max. */
size_t cp_search_bottlenecks(const struct cp_search *s, uint32_t *out, size_t max);
void cp_search_print_text(const struct cp_search *s, FILE *out);
void cp_search_print_json(const struct cp_search *s, FILE *out);
void cp_search_print_dot(const struct cp_search *s, FILE *out);
/* The graph into the search table of the profile database at path (db/search-table.h). */
int cp_search_store_db(const struct cp_search *s, const char *path);
/* The same for the searches v[0..n) of one program's processes, searched one after the
 * other: text and DOT one after the other; JSON and the database one graph, node ids
 * numbered on across the searches, the bottlenecks ranked search by search. */
void cp_search_print_text_all(const struct cp_search *v, size_t n, FILE *out);
void cp_search_print_json_all(const struct cp_search *v, size_t n, FILE *out);
void cp_search_print_dot_all(const struct cp_search *v, size_t n, FILE *out);
int cp_search_store_db_all(const struct cp_search *v, size_t n, const char *path);
/* The resource name of node i's focus: /Code/MODULE/FUNCTION[/loop@FILE:LINE], followed by
 * ",/Machine/HOST/PID" when the program has several processes (s->multi). */
void cp_search_focus_name(const struct cp_search *s, uint32_t i, char *buf, size_t cap);

#endif
