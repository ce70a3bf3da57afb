/* The probes' costs measured on this machine at the start of a search (search.h,
 * docs/cmd-search.md "Cost limit"): callpath-calibrate (calibrate/main.c) runs under the
 * runtime with the control channel and loop probes allowed, in a temporary measurement
 * directory, without sampling; it measures its thread CPU time per call of a tiny function
 * and per iteration of a tight loop, prints the medians, waits while the probes go in
 * through the control channel (the tiny function's entry probe, the loop function's loop
 * probes: what the search inserts), and measures again. The difference is the cost of one
 * execution. */
#include "search/search.h"
#include "search/procs.h"

#include "base/error.h"
#include "record/control.h"
#include "record/record.h"
#include "search/loops.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define CALIB_CALLS "150000"	  /* calls of cp_calib_tiny per repetition */
#define CALIB_ITERATIONS "300000" /* iterations of cp_calib_spin's loop per repetition */
#define LINE_WAIT_S 10.0	  /* longest wait for a line of the program */
#define COST_MIN_NS 0.5		  /* plausible costs of one execution */
#define COST_MAX_NS 100000.0

struct calib {
	const volatile int *stop;   /* set: give up (read_line fails) */
	const sigset_t *child_mask; /* the program's signal mask, or NULL: the caller's */
	pid_t child;		    /* runs the program under the runtime (cp_record_run) */
	int to, from;		    /* the program's stdin (write end) and stdout (read end) */
	char dir[PATH_MAX], exe[PATH_MAX];
};

/* The child: the program's stdin and stdout are the pipes, its stderr /dev/null. */
static void run_child(const char *prog, const char *runtime, const char *dir, int in, int out,
		      const sigset_t *mask)
{
	if (mask) /* not the calibration thread's: SIGTERM must reach the program */
		sigprocmask(SIG_SETMASK, mask, NULL);
	struct cp_record_opts o;
	struct cp_record_result res;
	char *argv[] = {(char *)prog, CALIB_CALLS, CALIB_ITERATIONS, NULL};
	int null = open("/dev/null", O_WRONLY);
	if (dup2(in, 0) < 0 || dup2(out, 1) < 0 || null < 0 || dup2(null, 2) < 0)
		_exit(127);
	cp_record_opts_init(&o);
	o.name = "search";
	o.argv = argv;
	o.runtime = runtime;
	o.outdir = dir;
	o.mpi = 0;
	o.control = 1;
	o.loops = 1;
	/* a pattern that matches nothing: probes on (the control channel adds them), and
	 * with no event given, no sampling (CALLPATH_PROBE_ONLY) */
	o.probes = "callpath-calibrate:cp_calib_none";
	_exit(cp_record_run(&o, &res) ? 127 : res.status);
}

static int start(struct calib *k, const char *prog, const char *runtime)
{
	const char *tmp = getenv("TMPDIR");
	int in[2], out[2];
	if (!realpath(prog, k->exe))
		return cp_error(CP_ENOENT, "%s: %s", prog, strerror(errno));
	snprintf(k->dir, sizeof k->dir, "%s/callpath-calibrate-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(k->dir)) {
		k->dir[0] = 0;
		return cp_error(CP_EIO, "cannot make a temporary directory: %s", strerror(errno));
	}
	if (pipe2(in, O_CLOEXEC))
		return cp_error(CP_EIO, "pipe: %s", strerror(errno));
	if (pipe2(out, O_CLOEXEC)) {
		close(in[0]);
		close(in[1]);
		return cp_error(CP_EIO, "pipe: %s", strerror(errno));
	}
	fflush(NULL);
	k->child = fork();
	if (!k->child) {
		close(in[1]);
		close(out[0]);
		run_child(k->exe, runtime, k->dir, in[0], out[1], k->child_mask);
	}
	close(in[0]);
	close(out[1]);
	k->to = in[1];
	k->from = out[0];
	if (k->child < 0)
		return cp_error(CP_EIO, "fork: %s", strerror(errno));
	return 0;
}

/* The program's next line (without its newline) into line; waits up to LINE_WAIT_S. Read
 * byte by byte: the program writes a line, then waits or ends. */
static int read_line(struct calib *k, char *line, size_t cap)
{
	double end = cp_search_now() + LINE_WAIT_S;
	size_t n = 0;
	for (;;) {
		struct pollfd p = {k->from, POLLIN, 0};
		double left = end - cp_search_now();
		if (k->stop && *k->stop)
			return cp_error(CP_EIO, "the calibration was abandoned");
		if (left <= 0 || n + 1 >= cap)
			return cp_error(CP_EIO, "the calibration program did not answer");
		int r = poll(&p, 1, left > 0.1 ? 100 : (int)(left * 1000) + 1);
		ssize_t got = r > 0 ? read(k->from, line + n, 1) : 0;
		if ((r < 0 || got < 0) && errno == EINTR)
			continue;
		if (r > 0 && got <= 0)
			return cp_error(CP_EIO, "the calibration program ended early");
		if (got > 0 && line[n] == '\n') {
			line[n] = 0;
			return 0;
		}
		n += got > 0;
	}
}

/* cp_calib_tiny's entry probe and cp_calib_spin's loop probes, as the search inserts
 * them (run.c: add_entry, add_loops). */
static int insert(struct calib *k, int pid)
{
	struct cp_control ctl;
	struct cp_loop_plan plan;
	char reply[CP_CONTROL_REPLY_MAX];
	int rc = CP_ENOENT, n = 0, loops = 0;
	for (int tries = 0; tries < 40 && rc; tries++) {
		rc = cp_control_open(&ctl, pid, k->dir);
		if (rc)
			usleep(25000);
	}
	if (rc)
		return rc;
	const char *pats[] = {"callpath-calibrate:cp_calib_tiny",
			      "callpath-calibrate:cp_calib_spin"};
	for (int i = 0; i < 2 && !rc; i++) {
		rc = cp_control_request(&ctl, "add", pats[i], reply, sizeof reply, 10);
		if (!rc && (sscanf(reply, "%d", &n) != 1 || n < 1))
			rc = cp_error(CP_EINVAL, "%s not probed: %s", pats[i], reply);
	}
	cp_loop_plan_init(&plan);
	if (!rc)
		rc = cp_loop_plan_make(&plan, k->exe, "cp_calib_spin");
	if (!rc)
		rc = cp_control_request_long(&ctl, "loops", plan.request.buf, reply, sizeof reply,
					     10);
	if (!rc && (sscanf(reply, "%d", &loops) != 1 || loops < 1))
		rc = cp_error(CP_EINVAL, "cp_calib_spin's loop not probed: %s", reply);
	cp_loop_plan_release(&plan);
	cp_control_close(&ctl);
	return rc;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	remove(path);
	return 0;
}

/* The program ended (killed when it is still running), its CPU time (with what it waited
 * for) into *cpu_s, and the directory removed. */
static void finish(struct calib *k, int kill_it, double *cpu_s)
{
	struct rusage ru;
	memset(&ru, 0, sizeof ru);
	if (k->to >= 0)
		close(k->to);
	if (k->from >= 0)
		close(k->from);
	if (k->child > 0) {
		if (kill_it)
			kill(k->child, SIGTERM); /* passed on to the program */
		while (wait4(k->child, NULL, 0, &ru) < 0 && errno == EINTR)
			;
	}
	*cpu_s = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
		 (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
	if (k->dir[0])
		nftw(k->dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* The line that starts the second phase (SIGPIPE is blocked in the calibration's thread:
 * a program that ended makes the write fail). */
static int say_go(struct calib *k)
{
	return write(k->to, "go\n", 3) == 3 ? 0 : -1;
}

/* Both phases: the costs per call and per iteration with the probes less without. */
static int measure(struct calib *k, double *call_ns, double *edge_ns)
{
	char line[256];
	int pid = 0;
	double c0, e0, c1, e1;
	int rc = read_line(k, line, sizeof line);
	if (!rc && sscanf(line, "plain %d %lf %lf", &pid, &c0, &e0) != 3)
		rc = cp_error(CP_EINVAL, "unexpected output of the calibration program: %s", line);
	if (!rc)
		rc = insert(k, pid);
	if (!rc && say_go(k))
		rc = cp_error(CP_EIO, "the calibration program ended early");
	if (!rc)
		rc = read_line(k, line, sizeof line);
	if (!rc && sscanf(line, "probed %lf %lf", &c1, &e1) != 2)
		rc = cp_error(CP_EINVAL, "unexpected output of the calibration program: %s", line);
	if (!rc) {
		*call_ns = c1 - c0;
		*edge_ns = e1 - e0;
	}
	return rc;
}

static int calibrate(struct cp_search_costs *c, const char *prog, const char *runtime,
		     const volatile int *stop, const sigset_t *child_mask)
{
	struct calib k;
	double call_ns = 0, edge_ns = 0, t0 = cp_search_now();
	memset(&k, 0, sizeof k);
	k.to = k.from = -1;
	k.stop = stop;
	k.child_mask = child_mask;
	memset(c, 0, sizeof *c);
	int rc = start(&k, prog, runtime);
	if (!rc)
		rc = measure(&k, &call_ns, &edge_ns);
	finish(&k, rc != 0, &c->cpu_s);
	c->wall_s = cp_search_now() - t0;
	if (rc) {
		snprintf(c->why, sizeof c->why, "%s", cp_error_message());
		cp_error_clear();
		return -1;
	}
	if (!(call_ns >= COST_MIN_NS && call_ns <= COST_MAX_NS && edge_ns >= COST_MIN_NS &&
	      edge_ns <= COST_MAX_NS)) {
		snprintf(c->why, sizeof c->why,
			 "implausible values measured: %.1f ns per call, %.1f ns per loop "
			 "iteration",
			 call_ns, edge_ns);
		return -1;
	}
	c->calibrated = 1;
	c->per_call_ns = call_ns;
	c->per_edge_ns = edge_ns;
	return 0;
}

/* The calibration's thread: SIGINT, SIGTERM (the CLI's handlers run in its main thread),
 * SIGCHLD and SIGPIPE blocked from its start (cp_search_calib_start); the calibration
 * program gets the mask the thread was created from. */
static void *calib_thread(void *arg)
{
	struct cp_search_calib *j = arg;
	calibrate(&j->costs, j->prog, j->runtime, &j->stop, &j->mask);
	__atomic_store_n(&j->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

int cp_search_calib_start(struct cp_search_calib *j, const char *prog, const char *runtime)
{
	memset(j, 0, sizeof *j);
	snprintf(j->prog, sizeof j->prog, "%s", prog);
	snprintf(j->runtime, sizeof j->runtime, "%s", runtime ? runtime : "");
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGCHLD);
	sigaddset(&set, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &set, &j->mask); /* the new thread inherits it */
	int e = pthread_create(&j->thread, NULL, calib_thread, j);
	pthread_sigmask(SIG_SETMASK, &j->mask, NULL);
	if (e) {
		snprintf(j->costs.why, sizeof j->costs.why, "cannot start a thread: %s",
			 strerror(e));
		j->done = 1;
		return -1;
	}
	j->started = 1;
	return 0;
}

int cp_search_calib_poll(struct cp_search_calib *j, struct cp_search_costs *c)
{
	if (!j || !__atomic_load_n(&j->done, __ATOMIC_ACQUIRE))
		return 0;
	*c = j->costs;
	return 1;
}

void cp_search_calib_finish(struct cp_search_calib *j, int abandon)
{
	if (abandon)
		j->stop = 1;
	if (j->started)
		pthread_join(j->thread, NULL);
	j->started = 0;
	j->done = 1;
}
