/* Control channel client (control.h). */
#include "record/control.h"

#include "base/error.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* The directory of the control FIFO DIR/PID.control the process holds open (a runtime
 * loaded by attach --inject). 0 or -1. */
static int dir_of_fifo(int pid, char *out, size_t cap)
{
	char fds[64], link[PATH_MAX + 64], suffix[64], target[PATH_MAX];
	snprintf(fds, sizeof fds, "/proc/%d/fd", pid);
	snprintf(suffix, sizeof suffix, "/%d%s", pid, CP_CONTROL_SUFFIX);
	DIR *d = opendir(fds);
	int rc = -1;
	for (struct dirent *e; d && rc && (e = readdir(d));) {
		snprintf(link, sizeof link, "%s/%s", fds, e->d_name);
		ssize_t n = readlink(link, target, sizeof target - 1);
		size_t sl = strlen(suffix);
		if (n <= (ssize_t)sl)
			continue;
		target[n] = 0;
		if (strcmp(target + n - sl, suffix) || (size_t)n - sl >= cap)
			continue;
		memcpy(out, target, (size_t)n - sl);
		out[n - sl] = 0;
		rc = 0;
	}
	if (d)
		closedir(d);
	return rc;
}

/* CALLPATH_OUTPUT from /proc/PID/environ (NUL-separated KEY=VALUE). */
static int dir_of_process(int pid, char *out, size_t cap)
{
	char path[64], buf[65536];
	snprintf(path, sizeof path, "/proc/%d/environ", pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return cp_error(errno == ENOENT ? CP_ENOENT : CP_EPERM,
				"cannot read the environment of process %d: %s", pid,
				strerror(errno));
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n < 0)
		n = 0;
	buf[n] = 0;
	for (char *p = buf; p < buf + n; p += strlen(p) + 1)
		if (!strncmp(p, "CALLPATH_OUTPUT=", 16) && p[16]) {
			snprintf(out, cap, "%s", p + 16);
			return 0;
		}
	if (!dir_of_fifo(pid, out, cap)) /* attach --inject: the environment is the old one */
		return 0;
	return cp_error(CP_ENOENT,
			"process %d is not measured by callpath (no CALLPATH_OUTPUT in its "
			"environment); give its measurement directory with -o",
			pid);
}

static int open_reply(struct cp_control *c)
{
	static unsigned serial;
	snprintf(c->reply_path, sizeof c->reply_path, "%s/.reply-%d-%u", c->dir, (int)getpid(),
		 __atomic_fetch_add(&serial, 1, __ATOMIC_RELAXED));
	unlink(c->reply_path);
	if (mkfifo(c->reply_path, 0600))
		return cp_error(CP_EIO, "cannot make the reply FIFO %s: %s", c->reply_path,
				strerror(errno));
	/* Read-write: the open does not wait for a writer, and poll() never sees a hang-up
	 * between the runtime's replies. */
	c->reply_fd = open(c->reply_path, O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (c->reply_fd < 0) {
		int e = errno;
		unlink(c->reply_path);
		return cp_error(CP_EIO, "cannot open the reply FIFO %s: %s", c->reply_path,
				strerror(e));
	}
	return 0;
}

int cp_control_open(struct cp_control *c, int pid, const char *dir)
{
	memset(c, 0, sizeof *c);
	c->reply_fd = -1;
	c->pid = pid;
	if (pid <= 0 || (kill(pid, 0) && errno == ESRCH))
		return cp_error(CP_ENOENT, "no process %d", pid);
	int rc = dir ? 0 : dir_of_process(pid, c->dir, sizeof c->dir);
	if (dir && !realpath(dir, c->dir)) /* the runtime answers absolute reply paths only */
		return cp_error(CP_ENOENT, "cannot use %s: %s", dir, strerror(errno));
	return rc ? rc : open_reply(c);
}

static int send_request(struct cp_control *c, const char *verb, const char *arg)
{
	char path[PATH_MAX + 64], line[CP_CONTROL_LINE_MAX + 1];
	int len = snprintf(line, sizeof line, "%s\t%s\t%s\n", c->reply_path, verb, arg);
	if (len < 0 || len >= (int)sizeof line || strchr(arg, '\n') || strchr(arg, '\t'))
		return cp_error(CP_EINVAL, "request too long or with a tab or newline: '%.80s'",
				arg);
	snprintf(path, sizeof path, "%s/%d%s", c->dir, c->pid, CP_CONTROL_SUFFIX);
	int fd = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return cp_error(CP_ENOENT,
				"process %d has no control channel (%s: %s); run it under callpath "
				"probe or callpath record --control",
				c->pid, path, errno == ENXIO ? "nobody reads it" : strerror(errno));
	/* Blocking write of less than PIPE_BUF: atomic, and waits while the FIFO is full. */
	fcntl(fd, F_SETFL, 0);
	ssize_t w = write(fd, line, (size_t)len);
	int e = errno;
	close(fd);
	if (w != len)
		return cp_error(CP_EIO, "cannot write to %s: %s", path, strerror(e));
	return 0;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The next whole line from the reply FIFO into line (without its newline). */
static int read_line(struct cp_control *c, char *line, size_t cap, double timeout_s)
{
	double end = now_s() + timeout_s;
	for (;;) {
		char *nl = memchr(c->buf, '\n', c->have);
		if (nl) {
			size_t n = (size_t)(nl - c->buf);
			snprintf(line, cap, "%.*s", (int)n, c->buf);
			c->have -= n + 1;
			memmove(c->buf, nl + 1, c->have);
			return 0;
		}
		if ((kill(c->pid, 0) && errno == ESRCH) || (c->gone && c->gone(c->gone_arg)))
			return cp_error(CP_ENOENT, "process %d ended before it answered", c->pid);
		if (now_s() > end || c->have == sizeof c->buf)
			return cp_error(
			    CP_EIO,
			    "no answer from process %d within %.0f s (does it run with "
			    "the control channel, and is %s its measurement directory?)",
			    c->pid, timeout_s, c->dir);
		struct pollfd p = {c->reply_fd, POLLIN, 0};
		if (poll(&p, 1, 100) > 0) {
			ssize_t n = read(c->reply_fd, c->buf + c->have, sizeof c->buf - c->have);
			if (n > 0)
				c->have += (size_t)n;
		}
	}
}

int cp_control_request(struct cp_control *c, const char *verb, const char *arg, char *reply,
		       size_t cap, double timeout_s)
{
	char line[CP_CONTROL_REPLY_MAX + 1];
	int rc = send_request(c, verb, arg ? arg : "");
	if (!rc)
		rc = read_line(c, line, sizeof line, timeout_s);
	if (rc)
		return rc;
	if (!strncmp(line, "ok", 2) && (!line[2] || line[2] == '\t')) {
		snprintf(reply, cap, "%s", line[2] ? line + 3 : "");
		return 0;
	}
	if (!strncmp(line, "error\t", 6))
		return cp_error(CP_EINVAL, "process %d: %s", c->pid, line + 6);
	return cp_error(CP_EIO, "process %d: unexpected reply '%.80s'", c->pid, line);
}

int cp_control_request_long(struct cp_control *c, const char *verb, const char *arg, char *reply,
			    size_t cap, double timeout_s)
{
	char path[PATH_MAX + 64], fverb[64];
	static unsigned serial;
	size_t len = strlen(arg);
	/* the line: reply path, two tabs, the verb, the argument, the newline */
	if (strlen(c->reply_path) + strlen(verb) + len + 3 <= CP_CONTROL_LINE_MAX)
		return cp_control_request(c, verb, arg, reply, cap, timeout_s);
	if (len > CP_CONTROL_FILE_MAX)
		return cp_error(CP_EINVAL, "a %s request of %zu bytes: more than %u", verb, len,
				CP_CONTROL_FILE_MAX);
	snprintf(path, sizeof path, "%s/.%s-%d-%u", c->dir, verb, (int)getpid(),
		 __atomic_fetch_add(&serial, 1, __ATOMIC_RELAXED));
	snprintf(fverb, sizeof fverb, "%s-file", verb);
	unlink(path); /* one left by an earlier client of this pid: never written through */
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return cp_error(CP_EIO, "cannot write %s: %s", path, strerror(errno));
	ssize_t w = write(fd, arg, len);
	int e = errno;
	if (close(fd) || w != (ssize_t)len) {
		unlink(path);
		return cp_error(CP_EIO, "cannot write %s: %s", path, strerror(w < 0 ? e : EIO));
	}
	int rc = cp_control_request(c, fverb, path, reply, cap, timeout_s);
	unlink(path);
	return rc;
}

void cp_control_close(struct cp_control *c)
{
	if (c->reply_fd >= 0) {
		close(c->reply_fd);
		unlink(c->reply_path);
	}
	c->reply_fd = -1;
}

int cp_control_fifo_pid(const char *name)
{
	char *end;
	long pid = strtol(name, &end, 10);
	return pid > 0 && pid <= INT_MAX && end != name && !strcmp(end, CP_CONTROL_SUFFIX)
		   ? (int)pid
		   : 0;
}

void cp_control_sweep(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	if (!d)
		return;
	while ((e = readdir(d))) {
		int pid = cp_control_fifo_pid(e->d_name);
		if (!pid || kill((pid_t)pid, 0) == 0 || errno != ESRCH)
			continue;
		char path[PATH_MAX];
		if (snprintf(path, sizeof path, "%s/%s", dir, e->d_name) < (int)sizeof path)
			unlink(path);
	}
	closedir(d);
}
