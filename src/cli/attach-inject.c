/* callpath attach --inject PID: the runtime loaded into the running process (src/kcopy/
 * inject.c) measures until --for, Ctrl-C or the process's end; then the control channel's
 * `detach` makes it write the measurement and go dormant (docs/cmd-attach.md). */
#include "cli/cli.h"
#include "base/error.h"
#include "kcopy/kcopy.h"
#include "record/control.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t stop_signal;

static void on_stop(int sig)
{
	stop_signal = sig;
}

/* Alive and not a zombie. */
static int process_alive(pid_t pid)
{
	char path[64], buf[512];
	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return 0;
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = 0;
	const char *end = strrchr(buf, ')');
	return end && end[1] == ' ' && end[2] != 'Z' && end[2] != 'X';
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* SIGINT, SIGTERM, SIGHUP and SIGQUIT set stop_signal from before the injection until the
 * measurement is detached: one that came during the injected call (held back there,
 * src/kcopy/inject.c) then ends the measurement through detach, rather than ending callpath
 * with the runtime armed and nobody to detach it. */
static const int stop_sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
#define NSTOP (sizeof stop_sigs / sizeof stop_sigs[0])

static void stop_handlers(struct sigaction *saved, int restore)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_stop;
	for (size_t i = 0; i < NSTOP; i++)
		sigaction(stop_sigs[i], restore ? &saved[i] : &sa, restore ? NULL : &saved[i]);
}

/* Until the time is up, a stop signal or the process's end; 1 if it ended. */
static int wait_measuring(pid_t pid, double seconds)
{
	double end = seconds > 0 ? now_s() + seconds : 0;
	int alive;
	while ((alive = process_alive(pid)) && !stop_signal && (!end || now_s() < end)) {
		struct timespec ts = {0, 20000000};
		nanosleep(&ts, NULL);
	}
	return !alive;
}

/* The runtime writes its measurement and goes dormant. */
static int detach(pid_t pid, const char *outdir)
{
	struct cp_control c;
	char reply[256];
	int rc = cp_control_open(&c, pid, outdir);
	if (!rc) {
		rc = cp_control_request(&c, "detach", "", reply, sizeof reply, 30.0);
		cp_control_close(&c);
	}
	if (rc == CP_ENOENT && !process_alive(pid)) {
		cp_error_clear(); /* it ended meanwhile: its runtime wrote the files at exit */
		return 1;
	}
	return rc;
}

static int measure_and_detach(pid_t pid, const char *outdir, double seconds, int quiet,
			      const struct cp_inject_result *res, int *ended)
{
	if (!quiet)
		fprintf(stderr,
			"callpath attach: runtime %s process %d (%zu threads stopped, %u tries "
			"for a safe point)\n",
			res->was_loaded ? "re-armed in" : "loaded into", (int)pid, res->threads,
			res->tries);
	*ended = wait_measuring(pid, seconds);
	if (*ended)
		return 0;
	int rc = detach(pid, outdir);
	if (rc < 0)
		return -1;
	*ended = rc == 1;
	return 0;
}

int cli_attach_inject(pid_t pid, const char *outdir, const char *events, double seconds, int quiet,
		      int *ended)
{
	char runtime[PATH_MAX];
	struct cp_inject_result res;
	struct cp_inject_opts o = {runtime, outdir, events};
	struct sigaction saved[NSTOP];
	if (cli_runtime_lib(CLI_RUNTIME_LIB, runtime, sizeof runtime))
		return -1;
	stop_handlers(saved, 0);
	int rc = cp_kcopy_inject(pid, &o, &res);
	if (!rc)
		rc = measure_and_detach(pid, outdir, seconds, quiet, &res, ended);
	stop_handlers(saved, 1);
	return rc;
}
