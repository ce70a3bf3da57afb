/* The kernel-copy sampling driver: profiles a process from outside, without preloading or
 * stopping it. Every thread gets a perf_event sampling event (inherited by the threads it
 * creates later) whose samples carry the user registers and a copy of the top of the user
 * stack (PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER); callpath reads them from the
 * mmap'd ring buffers itself and unwinds them offline with the runtime's own CFI unwinder
 * (cp_unwind_copy: one unwinder, two drivers), against read-only mappings of the target's
 * ELF files (cp_modules_map_file). The result is the usual measurement directory
 * (format/measure.h): one process file and one thread file per sampled thread.
 *
 * Used by `callpath attach PID` and by `callpath record` for static executables (which
 * cannot be preloaded). Design and limits: docs/internals/kcopy.md.
 *
 * Depends on: events (the event catalog), runtime's offline library (unwind, cct),
 * format, base. */
#ifndef CP_KCOPY_H
#define CP_KCOPY_H

#include <limits.h>
#include <stdint.h>
#include <sys/types.h>

#include "events/events.h"

struct cp_kcopy_opts {
	const char *name;     /* the command, for messages */
	struct cp_ev event;   /* what to sample (time events count task-clock ns) */
	const char *outdir;   /* the measurement directory (made if missing, emptied) */
	double seconds;	      /* stop after this long; <= 0: until the target ends or a signal */
	uint32_t stack_bytes; /* user stack bytes copied per sample (default 16 KiB) */
	int quiet;	      /* no progress messages on stderr */
};

struct cp_kcopy_result {
	int exited;	       /* the target ended while sampled */
	int status;	       /* record: its exit status (128+N for signal N) */
	uint64_t samples;      /* samples unwound into the profile */
	uint64_t lost;	       /* samples the kernel dropped (ring buffer full) */
	uint64_t other_pid;    /* samples of fork children (not profiled) */
	uint64_t stack_bytes;  /* stack bytes copied, in total */
	double unwind_seconds; /* CPU time callpath spent decoding and unwinding */
};

void cp_kcopy_opts_init(struct cp_kcopy_opts *o);

/* Samples the running process pid until o->seconds pass, a SIGINT/SIGTERM/SIGHUP arrives
 * or the process ends; the target is never stopped or written to. 0, or a negative CP_E*
 * code with cp_error() set: CP_ENOENT (no such process), CP_EPERM (another user's
 * process, perf_event_paranoid), CP_EIO. */
int cp_kcopy_attach(pid_t pid, const struct cp_kcopy_opts *o, struct cp_kcopy_result *res);

/* Can pid be sampled from here: it exists, is no kernel thread, belongs to our user? 0,
 * or the code and message cp_kcopy_attach would give (checked before any file is made). */
int cp_kcopy_check(pid_t pid);

/* Runs argv (a program callpath cannot preload: a static executable) with sampling enabled
 * at its exec, to its end; signals for it are passed on as `record` does. */
int cp_kcopy_record(char *const *argv, const struct cp_kcopy_opts *o, struct cp_kcopy_result *res);

/* Is path a static executable (an ELF file without PT_INTERP)? 1, 0, or -1 if unreadable. */
int cp_kcopy_is_static(const char *path);
/* Does it have the runtime linked in (libcallpath-rt.a)? 1, 0, or -1 if unreadable. */
int cp_kcopy_links_runtime(const char *path);

/* attach --inject (docs/internals/inject.md): the runtime loaded into the running process
 * and started there, measuring into outdir until cp_kcopy_detach. */
struct cp_inject_opts {
	const char *runtime; /* libcallpath-rt.so, an absolute path */
	const char *outdir;  /* absolute */
	const char *events;  /* CALLPATH_EVENTS syntax; NULL: cputime */
};

struct cp_inject_result {
	unsigned tries; /* stops until a thread was at a safe point */
	size_t threads; /* threads stopped at the last try */
	int was_loaded; /* the runtime was in the process already (dormant): re-armed */
};

/* 0, or a CP_E* code with cp_error() set: CP_ENOENT (the process is gone), CP_EPERM
 * (ptrace_scope, another tracer, another user), CP_EIO. */
int cp_kcopy_inject(pid_t pid, const struct cp_inject_opts *o, struct cp_inject_result *res);

#endif
