/* The sampling session: events on every thread of the target, the loop that drains their
 * rings into the profile until the time is up, a signal arrives or the target ends. */
#include "kcopy/kcopy-internal.h"

#include "base/error.h"
#include "base/xalloc.h"
#include "runtime/unwind/modules.h"
#include "runtime/unwind/unwind.h"

#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#define KC_SCRATCH (1u << 16)
#define KC_POLL_MS 100

struct kc_session {
	pid_t pid;
	struct perf_event_attr attr;
	struct kc_ring *rings; /* one per CPU */
	int ncpus;
	int *fds; /* one event per (thread, CPU) */
	pid_t *fd_tid;
	size_t nfds, alloc, talloc, nthreads;
	pid_t *inherited; /* threads the events followed by themselves (FORK records) */
	size_t ninherited, ialloc;
	struct kc_profile prof;
	char *scratch;
	int exited;	       /* EXIT record of the target's main thread */
	uint64_t last_scan_ns; /* last /proc/PID/maps scan for an unknown pc */
};

void cp_kcopy_opts_init(struct cp_kcopy_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->name = "attach";
	o->stack_bytes = 16384;
	cp_ev_parse("cputime", 7, &o->event, NULL, 0);
}

static uint64_t mono_ns(clockid_t clock)
{
	struct timespec ts;
	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Sampled already: by its own events, or by inherited ones (a second event would sample
 * it twice). */
static int has_thread(const struct kc_session *s, pid_t tid)
{
	for (size_t i = 0; i < s->nfds; i++)
		if (s->fd_tid[i] == tid)
			return 1;
	for (size_t i = 0; i < s->ninherited; i++)
		if (s->inherited[i] == tid)
			return 1;
	return 0;
}

/* The thread's events, one per CPU, each writing to its CPU's ring; enabled unless
 * they wait for an exec. */
static int thread_add(struct kc_session *s, pid_t tid)
{
	for (int cpu = 0; cpu < s->ncpus; cpu++) {
		int fd = kc_event_open(&s->attr, tid, cpu), rc = 0;
		if (fd < 0)
			return fd;
		XGROW(s->fds, s->nfds + 1, s->alloc);
		XGROW(s->fd_tid, s->nfds + 1, s->talloc);
		s->fds[s->nfds] = fd;
		s->fd_tid[s->nfds++] = tid;
		if (!s->rings[cpu].meta)
			rc = kc_ring_map(&s->rings[cpu], fd, KC_RING_PAGES);
		else if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, s->rings[cpu].fd) < 0)
			rc = cp_error(CP_EIO, "cannot share a ring buffer: %s", strerror(errno));
		if (rc)
			return rc;
		if (!s->attr.enable_on_exec)
			ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
	}
	s->nthreads++;
	return 0;
}

static void on_record(void *arg, const struct perf_event_header *h)
{
	struct kc_session *s = arg;
	const char *body = (const char *)(h + 1);

	switch (h->type) {
	case PERF_RECORD_SAMPLE: {
		uint64_t ip = *(const uint64_t *)body;
		uint64_t t0 = mono_ns(CLOCK_MONOTONIC);
		if (!cp_modules_find(ip) && t0 - s->last_scan_ns > 100000000ull) {
			s->last_scan_ns = t0;
			if (kc_target_scan(s->pid))
				cp_error_clear();
		}
		uint64_t c0 = mono_ns(CLOCK_THREAD_CPUTIME_ID);
		kc_profile_sample(&s->prof, h);
		s->prof.res->unwind_seconds +=
		    (double)(mono_ns(CLOCK_THREAD_CPUTIME_ID) - c0) / 1e9;
		break;
	}
	case PERF_RECORD_MMAP2: {
		const struct {
			uint32_t pid, tid;
			uint64_t addr, len, pgoff;
			uint32_t maj, min;
			uint64_t ino, gen;
			uint32_t prot, flags;
		} *m = (const void *)body;
		const char *name = (const char *)(m + 1);
		if ((pid_t)m->pid == s->pid && (m->prot & 4 /* PROT_EXEC */))
			kc_target_map(s->pid, name, m->addr, m->pgoff);
		break;
	}
	case PERF_RECORD_COMM: {
		const uint32_t *ids = (const uint32_t *)body;
		if ((pid_t)ids[0] == s->pid)
			kc_profile_comm(&s->prof, (pid_t)ids[1], body + 8);
		break;
	}
	case PERF_RECORD_FORK: { /* pid, ppid, tid, ptid: a thread that inherited events */
		const uint32_t *ids = (const uint32_t *)body;
		if ((pid_t)ids[0] == s->pid) {
			XGROW(s->inherited, s->ninherited + 1, s->ialloc);
			s->inherited[s->ninherited++] = (pid_t)ids[2];
		}
		break;
	}
	case PERF_RECORD_EXIT: {
		const uint32_t *ids = (const uint32_t *)body;
		if ((pid_t)ids[0] == s->pid && ids[0] == ids[2])
			s->exited = 1;
		break;
	}
	case PERF_RECORD_LOST:
		s->prof.res->lost += ((const uint64_t *)body)[1];
		break;
	}
}

static void drain_all(struct kc_session *s)
{
	for (int i = 0; i < s->ncpus; i++)
		kc_ring_drain(&s->rings[i], s->scratch, on_record, s);
}

/* One event per thread of the target; repeated until no thread is new (a thread created
 * by one not yet sampled). Threads created later by sampled ones inherit the event. */
static int open_threads(struct kc_session *s)
{
	char path[64];
	int added;

	do {
		DIR *d;
		added = 0;
		drain_all(s); /* FORK records: threads created meanwhile by sampled ones */
		snprintf(path, sizeof path, "/proc/%d/task", (int)s->pid);
		if (!(d = opendir(path)))
			return cp_error(CP_ENOENT, "no process %d", (int)s->pid);
		for (struct dirent *e; (e = readdir(d));) {
			pid_t tid = (pid_t)atoi(e->d_name);
			int rc;
			if (tid <= 0 || has_thread(s, tid))
				continue;
			rc = thread_add(s, tid);
			if (rc == CP_ENOENT) { /* ended meanwhile */
				cp_error_clear();
				continue;
			}
			if (rc) {
				closedir(d);
				return rc;
			}
			added++;
		}
		closedir(d);
	} while (added);
	return 0;
}

static volatile sig_atomic_t stop_signal, stop_from_terminal;

static void on_stop(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	stop_signal = sig;
	/* The terminal's ^C reaches the whole foreground group: the program has it already. */
	stop_from_terminal = si && si->si_code == SI_KERNEL;
}

/* SIGINT, SIGTERM and SIGHUP end the session (poll returns EINTR). */
static void stop_signals(struct sigaction *saved, int install)
{
	static const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
	struct sigaction sa;

	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_stop;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	for (int i = 0; i < 3; i++) {
		if (install)
			sigaction(sigs[i], &sa, &saved[i]);
		else
			sigaction(sigs[i], &saved[i], NULL);
	}
}

/* Polls and drains until the deadline (0: none), a stop signal, the target's end or
 * done(arg) says so. */
static void session_loop(struct kc_session *s, double seconds, int (*done)(void *), void *arg)
{
	uint64_t deadline = seconds > 0 ? mono_ns(CLOCK_MONOTONIC) + (uint64_t)(seconds * 1e9) : 0;
	struct pollfd *pfd = xcalloc((size_t)s->ncpus, sizeof(*pfd));

	while (!stop_signal && !s->exited) {
		for (int i = 0; i < s->ncpus; i++) {
			pfd[i].fd = s->rings[i].fd;
			pfd[i].events = POLLIN;
		}
		poll(pfd, (nfds_t)s->ncpus, KC_POLL_MS);
		drain_all(s);
		if (done ? done(arg) : kill(s->pid, 0) < 0 && errno == ESRCH)
			s->exited = 1;
		if (deadline && mono_ns(CLOCK_MONOTONIC) >= deadline)
			break;
	}
	free(pfd);
}

static int session_begin(struct kc_session *s, pid_t pid, const struct cp_kcopy_opts *o,
			 struct cp_kcopy_result *res, int enable_on_exec)
{
	memset(s, 0, sizeof(*s));
	memset(res, 0, sizeof(*res));
	s->pid = pid;
	s->scratch = xmalloc(KC_SCRATCH);
	s->ncpus = (int)sysconf(_SC_NPROCESSORS_ONLN);
	s->rings = xcalloc((size_t)(s->ncpus > 0 ? s->ncpus : 1), sizeof(*s->rings));
	kc_attr(&o->event, o->stack_bytes, enable_on_exec, &s->attr);
	if (o->event.kind == CP_EV_TIMER && strcmp(o->event.name, "cputime"))
		return cp_error(CP_ENOTSUP,
				"%s needs the runtime inside the program; sampling from "
				"outside measures cputime or perf events",
				o->event.name);
	if (o->event.kind == CP_EV_TRIGGER)
		return cp_error(CP_ENOTSUP, "%s needs the runtime inside the program",
				o->event.name);
	int rc = cp_unwind_init();
	if (rc)
		return rc;
	return kc_profile_start(&s->prof, o->outdir, pid, &o->event, res);
}

static void session_close(struct kc_session *s)
{
	for (size_t i = 0; i < s->nfds; i++)
		ioctl(s->fds[i], PERF_EVENT_IOC_DISABLE, 0);
	drain_all(s);
	for (int i = 0; i < s->ncpus; i++)
		kc_ring_close(&s->rings[i]);
	for (size_t i = 0; i < s->nfds; i++)
		close(s->fds[i]);
	free(s->fds);
	free(s->fd_tid);
	free(s->inherited);
	free(s->rings);
	free(s->scratch);
}

static int session_end(struct kc_session *s, int status)
{
	session_close(s);
	s->prof.res->exited = s->exited;
	return kc_profile_finish(&s->prof, s->exited, status);
}

int cp_kcopy_check(pid_t pid)
{
	char path[64];

	if (pid <= 0 || pid == getpid())
		return cp_error(CP_EINVAL, "%d is not a process callpath can profile", (int)pid);
	if (kill(pid, 0) < 0 && errno == ESRCH)
		return cp_error(CP_ENOENT, "no process %d", (int)pid);
	if (kill(pid, 0) < 0 && errno == EPERM)
		return cp_error(CP_EPERM,
				"process %d belongs to another user: callpath can sample "
				"only your own processes (or run it as that user)",
				(int)pid);
	snprintf(path, sizeof path, "/proc/%d/exe", (int)pid);
	if (access(path, F_OK) < 0 && errno == ENOENT)
		return cp_error(CP_EINVAL, "%d is a kernel thread or has ended", (int)pid);
	return 0;
}

int cp_kcopy_attach(pid_t pid, const struct cp_kcopy_opts *o, struct cp_kcopy_result *res)
{
	struct kc_session s;
	struct sigaction saved[3];
	int rc = cp_kcopy_check(pid);

	if (rc)
		return rc;
	rc = session_begin(&s, pid, o, res, 0);
	if (!rc)
		rc = kc_target_scan(pid);
	if (!rc)
		rc = open_threads(&s);
	if (rc) {
		session_close(&s);
		return rc;
	}
	if (!o->quiet)
		fprintf(stderr, "callpath %s: sampling process %d (%zu threads)%s\n", o->name,
			(int)pid, s.nthreads, o->seconds > 0 ? "" : "; Ctrl-C ends");
	stop_signal = 0;
	stop_signals(saved, 1);
	session_loop(&s, o->seconds, NULL, NULL);
	stop_signals(saved, 0);
	return session_end(&s, 0);
}

struct child_wait {
	pid_t pid;
	int status;
	int reaped;
};

static int child_done(void *arg)
{
	struct child_wait *w = arg;
	int st;

	if (stop_signal) { /* meant for the program: it ends the session by ending */
		if (!stop_from_terminal)
			kill(w->pid, stop_signal);
		stop_signal = 0;
	}
	if (waitpid(w->pid, &st, WNOHANG) != w->pid)
		return 0;
	w->reaped = 1;
	w->status = WIFSIGNALED(st) ? 128 + WTERMSIG(st) : WEXITSTATUS(st);
	return 1;
}

/* The child waits for the events to be open on it before it execs. */
static pid_t spawn_paused(char *const *argv, int *go)
{
	int fds[2];
	pid_t pid;

	if (pipe2(fds, O_CLOEXEC) < 0)
		return -1;
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		char c;
		close(fds[1]);
		if (read(fds[0], &c, 1) != 1)
			_exit(127);
		execvp(argv[0], argv);
		fprintf(stderr, "callpath: cannot run %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(fds[0]);
	*go = fds[1];
	return pid;
}

int cp_kcopy_record(char *const *argv, const struct cp_kcopy_opts *o, struct cp_kcopy_result *res)
{
	struct kc_session s;
	struct sigaction saved[3];
	struct child_wait w = {0, 0, 0};
	int go = -1, rc;

	w.pid = spawn_paused(argv, &go);
	if (w.pid < 0)
		return cp_error(CP_ECHILD, "cannot start %s: %s", argv[0], strerror(errno));
	rc = session_begin(&s, w.pid, o, res, 1);
	if (!rc)
		rc = thread_add(&s, w.pid);
	if (rc) {
		session_close(&s);
		close(go); /* the child ends without running the program */
		waitpid(w.pid, NULL, 0);
		return rc;
	}
	kc_profile_command(&s.prof, argv);
	stop_signal = 0;
	stop_signals(saved, 1);
	if (write(go, "g", 1) != 1)
		kill(w.pid, SIGKILL);
	close(go);
	session_loop(&s, 0, child_done, &w);
	while (!w.reaped && !child_done(&w))
		usleep(1000);
	stop_signals(saved, 0);
	s.exited = 1;
	res->status = w.status;
	return session_end(&s, w.status);
}
