/* Running a program under the runtime: the model behind `callpath record`, `probe` and
 * `gprof` (and next `search` and `attach`), which only parse options and print.
 *
 * cp_record_run() finds the program, prepares the measurement directory (an earlier
 * measurement in it is replaced), starts the program with libcallpath-rt.so preloaded and
 * the CALLPATH_* variables of the options (set in the child only: the caller's environment
 * is left as it is), forwards the signals meant for the program while it runs (SIGINT,
 * SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2 sent to this process with kill(); the
 * terminal's ^C reaches the program by itself) and waits for it.
 *
 * Under an MPI launcher (OMPI_COMM_WORLD_RANK, PMI_RANK or PMIX_RANK set) every rank runs
 * this: the default directory is one per job (callpath-PROG-JOB), shared by the ranks, and
 * an earlier measurement is replaced only as far as it ended before this rank started.
 * cp_record_wait_ranks() lets rank 0 wait for the others' files before it analyzes.
 *
 * Depends on: base (errors), format (the measurement directory), db (cp_record_analyze). */
#ifndef CP_RECORD_RECORD_H
#define CP_RECORD_RECORD_H

#include <limits.h>
#include <stdio.h>

#define CP_RECORD_MAX_EVENTS 16

struct cp_record_opts {
	const char *name;    /* the command, for messages ("callpath NAME: ...") */
	FILE *messages;	     /* where to say what happens (replacing, ...); NULL = nothing */
	char *const *argv;   /* the program and its arguments, NULL-terminated */
	const char *runtime; /* path of libcallpath-rt.so */
	const char *outdir;  /* measurement directory; NULL = ./callpath-PROG-PID (or -JOB) */
	const char *events[CP_RECORD_MAX_EVENTS]; /* CALLPATH_EVENTS items; none = cputime */
	int nevents;
	int perf_split;	    /* perf events in separate groups (CALLPATH_PERF_SPLIT) */
	int follow_exec;    /* profile programs started with exec (default 1) */
	int show_runtime;   /* keep the runtime's own frames in paths (CALLPATH_SHOW_RUNTIME) */
	const char *probes; /* CALLPATH_PROBES (PAT;+PAT;-PAT); NULL = no probes */
	const char *probe_metrics; /* CALLPATH_PROBE_METRICS; NULL = as inherited */
	/* MPI: libcallpath-mpi.so (its path; NULL = not available) preloaded beside the
	 * runtime with CALLPATH_MPI=1: mpi 1 always, 0 never, -1 (default) when the program
	 * is an MPI launcher or needs an MPI library (DT_NEEDED, its libraries' too). */
	int mpi;
	const char *mpi_lib;
	int mechanism; /* enum cp_record_mechanism */
	int loops;     /* loop probes may be added (CALLPATH_LOOPS=1: their metrics) */
	int control;   /* the control channel (CALLPATH_CONTROL=1: format/control.h) */
};

/* How samples are taken: the preloaded runtime's signal handler, or the kernel's register
 * and stack copies unwound by callpath (src/kcopy). Auto: kernel for static executables,
 * signal otherwise. */
enum cp_record_mechanism {
	CP_RECORD_MECH_AUTO = 0,
	CP_RECORD_MECH_SIGNAL = 1,
	CP_RECORD_MECH_KERNEL = 2,
};

struct cp_record_result {
	char outdir[PATH_MAX]; /* the measurement directory, absolute */
	int status;	       /* the program's exit status, 128+N when signal N killed it */
	int signal;	       /* N when signal N killed the program, else 0 */
	int rank;	       /* MPI rank of this process (cp_record_mpi_rank), -1 without MPI */
	int mpi;	       /* libcallpath-mpi.so was preloaded */
};

void cp_record_opts_init(struct cp_record_opts *o);

/* Runs the program of o to its end. 0, or a negative CP_E* code with cp_error() set:
 * CP_ECHILD when the program cannot be run (not found, not executable), CP_ENOENT when the
 * runtime is missing, CP_EIO for the directory, fork and wait. */
int cp_record_run(const struct cp_record_opts *o, struct cp_record_result *res);

/* Finds prog as execvp would (PATH when it has no '/'); out (PATH_MAX bytes) gets the real
 * path of the executable. 0, or -1 when there is none. */
int cp_record_find_program(const char *prog, char *out);

/* Prepares dir as a measurement directory for command name: an earlier measurement in it
 * is removed (said on messages; under MPI only what ended before this rank started, as
 * for record), the directory made; out gets its absolute path. */
int cp_record_prepare_dir(const char *name, FILE *messages, const char *dir, char *out, size_t cap);

/* Analyzes dir into dir/callpath.db without output (what report and export read). */
int cp_record_analyze(const char *dir);

/* The MPI rank of this process from the launcher's environment (Open MPI, MPICH/Hydra,
 * PMIx), or -1; *size (may be NULL) gets the number of ranks, 0 if unknown. */
int cp_record_mpi_rank(int *size);

/* Does the executable, or a library it needs (a few levels deep), need an MPI library
 * (libmpi*, libmpich*)? Is the program an MPI launcher (mpirun, mpiexec, srun...)? */
int cp_record_links_mpi(const char *exe);
int cp_record_is_launcher(const char *argv0, const char *exe);

/* Rank 0 of an MPI job: waits until dir holds the finished measurement of nranks programs
 * (process images that are neither fork children nor exec'd ones), at most timeout_s
 * seconds. Returns how many had finished. */
int cp_record_wait_ranks(const char *dir, int nranks, double timeout_s);

#endif
