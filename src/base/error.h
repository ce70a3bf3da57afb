/* Error codes and the last-error message (git's `return error(...)` idiom).
 *
 * Fallible functions return 0 or a negative CP_E* code. `return cp_error(code, fmt, ...)`
 * records a user-facing message and returns the code. Only src/cli/ prints it and exits.
 * Not for signal handlers (it formats with vsnprintf). */
#ifndef CP_BASE_ERROR_H
#define CP_BASE_ERROR_H

enum {
	CP_OK = 0,
	CP_EINVAL = -1,	  /* bad argument or option */
	CP_ENOMEM = -2,	  /* out of memory */
	CP_EIO = -3,	  /* read/write/open failure (errno in message) */
	CP_EFORMAT = -4,  /* corrupt, truncated or foreign file */
	CP_ENOTSUP = -5,  /* not supported here (no PMU, not x86-64, ...) */
	CP_ENOENT = -6,	  /* missing file, symbol, event */
	CP_EPERM = -7,	  /* permission (perf_event_paranoid, ptrace) */
	CP_ECHILD = -8,	  /* the profiled program failed to start */
	CP_EINTERNAL = -9 /* a bug in callpath */
};

int cp_error(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Appends context to the current message: "reading X: <previous message>". */
int cp_error_prefix(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
const char *cp_error_message(void);
void cp_error_clear(void);
const char *cp_error_name(int code);

#endif
