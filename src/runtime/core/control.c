/* The control channel's runtime side (format/control.h, docs/internals/control.md): a
 * thread of the runtime's own reads requests from the FIFO <pid>.control in the
 * measurement directory and inserts or removes probes while the program runs.
 *
 * Why a thread and a FIFO: patching takes locks, maps memory and writes notes, none of
 * which may happen in a signal handler; the thread does it in ordinary context, blocked in
 * read() the rest of the time (no polling, no signal, nothing the program sees). It is
 * started with libc's pthread_create (not our wrapper), so it has no measurement state:
 * it is not a thread of the program, never sampled, and the thread scan and the exit
 * accounting skip its tid (cp_rt.control_tid). It blocks every signal, so signals meant
 * for the process go to the program's threads. A fork child starts its own channel (its
 * own pid's FIFO and thread: the parent's thread does not survive fork), so that `callpath
 * search` can search a worker a program forked; an exec'd image starts its own on the same
 * FIFO (same pid). */
#include "runtime/core/runtime.h"
#include "runtime/probe/probe.h"

#include "format/control.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

static int control_fd = -1;
static char control_path[PATH_MAX + 32]; /* made at start: unlinked on the crash path too */

/* Writes one reply line into the client's FIFO; never blocks (a client that went away
 * loses its reply). */
static void reply(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC | O_NOFOLLOW);
	struct stat st;
	if (fd < 0)
		return;
	if (!fstat(fd, &st) && S_ISFIFO(st.st_mode)) {
		ssize_t w = write(fd, text, strlen(text));
		(void)w;
	}
	close(fd);
}

static void handle_probe(const char *verb, const char *arg, char *out, size_t cap)
{
	char why[512];
	int refused = 0, remove = !strcmp(verb, "remove");
	int n = cp_probe_control(arg, remove, &refused, why, sizeof why);
	if (n < 0)
		snprintf(out, cap, "error\t%s\n",
			 *arg ? "this process has no probe runtime (run it under callpath probe, "
				"or callpath record --control)"
			      : "empty pattern");
	else if (remove)
		snprintf(out, cap, "ok\t%d\n", n);
	else
		snprintf(out, cap, "ok\t%d\t%d%s%s\n", n, refused, refused ? "\t" : "",
			 refused ? why : "");
}

/* `loops-file PATH`: the plan read from the file (format/control.h); -1 with why set when
 * it cannot be read. The buffer is mapped, not allocated: the program's allocator is not
 * ours to use. */
static int loops_from_file(const char *path, char *why, size_t cap)
{
	struct stat st;
	/* not blocking: a FIFO named here must not hold the control thread (and detach) */
	int fd = *path == '/' ? open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK) : -1;
	if (fd < 0 || fstat(fd, &st) || !S_ISREG(st.st_mode) ||
	    (uint64_t)st.st_size > CP_CONTROL_FILE_MAX) {
		snprintf(why, cap,
			 "cannot read the plan file '%.200s' (absolute, regular, at most %u bytes)",
			 path, CP_CONTROL_FILE_MAX);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	size_t size = (size_t)st.st_size, got = 0;
	char *buf =
	    mmap(NULL, size + 1, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	while (buf != MAP_FAILED && got < size) {
		ssize_t n = read(fd, buf + got, size - got);
		if (n <= 0 && !(n < 0 && errno == EINTR))
			break;
		got += n > 0 ? (size_t)n : 0;
	}
	close(fd);
	if (buf == MAP_FAILED || got < size) {
		snprintf(why, cap, "cannot read the plan file '%.200s'", path);
		if (buf != MAP_FAILED)
			munmap(buf, size + 1);
		return -1;
	}
	buf[size] = 0;
	buf[strcspn(buf, "\n")] = 0;
	int n = cp_probe_loops(buf, why, cap);
	munmap(buf, size + 1);
	return n;
}

/* `detach` (attach --inject's end): the measurement is written as at exit, the runtime
 * stays loaded and dormant, and this thread ends after its reply (a re-arming starts a
 * new one). Refused in a program that was started under callpath. 1: the thread ends. */
static int handle_detach(char *out, size_t cap)
{
	if (!cp_rt_attached()) {
		snprintf(out, cap, "error\tthis process was not attached with --inject\n");
		return 0;
	}
	/* The program runs on as before: no probe of this session stays in its code. */
	cp_probe_control("*", 1, NULL, NULL, 0);
	cp_rt_fini(0);
	snprintf(out, cap, "ok\n");
	return 1;
}

/* A request whose reply path is relative (to the client's directory, unknown here): an
 * error, sent to the FIFO of that name in our measurement directory, where a client that
 * named that directory relatively made it. */
static void reply_relative(const char *path)
{
	char at[PATH_MAX + 64], out[CP_CONTROL_REPLY_MAX];
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	const char *slash = strrchr(control_path, '/');
	if (!slash || !*base || !strcmp(base, ".."))
		return;
	snprintf(at, sizeof at, "%.*s/%s", (int)(slash - control_path), control_path, base);
	snprintf(out, sizeof out, "error\tthe reply path '%.200s' is not absolute\n", path);
	reply(at, out);
}

/* One request line: REPLY-PATH TAB VERB TAB ARGUMENT. 1 if the thread is to end. */
static int handle_line(char *line)
{
	char out[CP_CONTROL_REPLY_MAX];
	int end = 0;
	char *verb = strchr(line, '\t');
	char *arg = verb ? strchr(verb + 1, '\t') : NULL;
	if (!verb || !arg || !*line)
		return 0; /* no reply path: nobody to answer */
	*verb++ = 0;
	*arg++ = 0;
	if (*line != '/') {
		reply_relative(line);
		return 0;
	}
	if (!strcmp(verb, "ping"))
		snprintf(out, sizeof out, "ok\t%d\n", (int)cp_rt.pid);
	else if (!strcmp(verb, "detach"))
		end = handle_detach(out, sizeof out);
	else if (!strcmp(verb, "add") || !strcmp(verb, "remove"))
		handle_probe(verb, arg, out, sizeof out);
	else if (!strcmp(verb, "loops") || !strcmp(verb, "loops-file")) {
		char why[512];
		int n = verb[5] ? loops_from_file(arg, why, sizeof why)
				: cp_probe_loops(arg, why, sizeof why);
		snprintf(out, sizeof out, "%s\t%s\n", n < 0 ? "error" : "ok", why);
	} else
		snprintf(out, sizeof out,
			 "error\tunknown request '%.64s' (known: ping, add, remove, loops, "
			 "loops-file, detach)\n",
			 verb);
	reply(line, out);
	return end;
}

static void *control_main(void *unused)
{
	static char buf[2 * CP_CONTROL_LINE_MAX];
	size_t have = 0;
	(void)unused;
	__atomic_store_n(&cp_rt.control_tid, (int32_t)syscall(SYS_gettid), __ATOMIC_RELEASE);
	for (;;) {
		ssize_t n = read(control_fd, buf + have, sizeof buf - 1 - have);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		have += (size_t)n;
		char *start = buf, *nl;
		while ((nl = memchr(start, '\n', have - (size_t)(start - buf)))) {
			*nl = 0;
			if (handle_line(start)) {
				close(control_fd);
				control_fd = -1;
				__atomic_store_n(&cp_rt.control_tid, 0, __ATOMIC_RELEASE);
				return NULL;
			}
			start = nl + 1;
		}
		have -= (size_t)(start - buf);
		memmove(buf, start, have);
		if (have == sizeof buf - 1)
			have = 0; /* a line longer than the protocol allows: dropped */
	}
	return NULL;
}

typedef int (*create_fn)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
static create_fn create; /* libc's pthread_create, looked up once (a fork child has it) */

/* Process start (and a fork child's), after the first thread and the thread scan began. */
void cp_control_start(void)
{
	const char *want = cp_rt_getenv("CALLPATH_CONTROL");
	const char *path = control_path;
	pthread_t th;
	sigset_t all, old;
	if (!cp_rt.active || !want || strcmp(want, "1"))
		return;
	snprintf(control_path, sizeof control_path, "%s/%d%s", cp_rt.outdir, (int)cp_rt.pid,
		 CP_CONTROL_SUFFIX);
	if (mkfifo(path, 0600) && errno != EEXIST) {
		cp_rt_note("control channel: cannot make %s: %s", path, strerror(errno));
		return;
	}
	/* Read-write: the FIFO always has a writer, so read() blocks instead of seeing EOF
	 * between clients. */
	control_fd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
	if (!create)
		create = (create_fn)dlsym(RTLD_NEXT, "pthread_create");
	if (!create) /* a static program (libcallpath-rt.a): no wrapper, libc's is the one */
		create = pthread_create;
	if (control_fd < 0 || !create) {
		cp_rt_note("control channel: cannot open %s: %s", path, strerror(errno));
		return;
	}
	/* Every signal blocked from the thread's first instruction (inherited mask); raw
	 * system calls, since the program's view of the mask goes through our wrappers. */
	sigfillset(&all);
	syscall(SYS_rt_sigprocmask, SIG_SETMASK, &all, &old, _NSIG / 8);
	int rc = create(&th, NULL, control_main, NULL);
	syscall(SYS_rt_sigprocmask, SIG_SETMASK, &old, NULL, _NSIG / 8);
	if (rc) {
		cp_rt_note("control channel: cannot start its thread: %s", strerror(rc));
		close(control_fd);
		control_fd = -1;
		return;
	}
	pthread_detach(th);
}

/* Image end: the FIFO goes, unless an exec reuses it (same pid). AS-safe. */
void cp_control_stop(int exec)
{
	if (control_fd >= 0 && !exec)
		unlink(control_path);
}

void cp_control_after_fork(void)
{
	if (control_fd >= 0)
		close(control_fd);
	control_fd = -1;
	cp_rt.control_tid = 0;
}
