/* The client side of the control channel (format/control.h): requests to a running,
 * measured process, as `callpath probe --pid` and `callpath search` make them.
 *
 * Depends on: base (errors), format (the protocol). */
#ifndef CP_RECORD_CONTROL_H
#define CP_RECORD_CONTROL_H

#include "format/control.h"

#include <limits.h>
#include <stddef.h>

struct cp_control {
	int pid;
	char dir[PATH_MAX];		/* the measurement directory */
	char reply_path[PATH_MAX + 64]; /* our reply FIFO (in dir) */
	int reply_fd;
	char buf[2 * CP_CONTROL_REPLY_MAX];
	size_t have;
	/* Optional: asked every 0.1 s while a reply is awaited; nonzero gives up the wait (the
	 * process image that was asked is gone: an exec'd program answers no more). */
	int (*gone)(void *arg);
	void *gone_arg;
};

/* Connects to process pid, whose measurement directory is dir (NULL: read from the
 * process's environment, CALLPATH_OUTPUT in /proc/PID/environ). 0, or CP_ENOENT (no such
 * process, or it has no control channel: the message says which), CP_EIO. */
int cp_control_open(struct cp_control *c, int pid, const char *dir);

/* One request (verb and argument as format/control.h lists them); waits up to timeout_s
 * seconds for the reply. 0 with the reply's text after "ok" (without the tab) in reply
 * (cap bytes); CP_EINVAL when the process answered "error" (the message is its text);
 * CP_ENOENT when the process went away; CP_EIO on a timeout or a failed write. */
int cp_control_request(struct cp_control *c, const char *verb, const char *arg, char *reply,
		       size_t cap, double timeout_s);
/* The same for a verb that also takes its argument from a file (format/control.h:
 * `loops-file`): an argument too long for a request line is written to a file in the
 * measurement directory, named by the request `VERB-file PATH`, and removed after the
 * reply. */
int cp_control_request_long(struct cp_control *c, const char *verb, const char *arg, char *reply,
			    size_t cap, double timeout_s);

/* Removes the reply FIFO. */
void cp_control_close(struct cp_control *c);

/* The pid a directory entry named "PID.control" (a control FIFO) belongs to; 0 for any
 * other name. */
int cp_control_fifo_pid(const char *name);

/* Removes the control FIFOs (<pid>.control) in dir of processes that no longer exist: a
 * program killed by a signal leaves its FIFO behind (its runtime's exit code never ran). */
void cp_control_sweep(const char *dir);

#endif
