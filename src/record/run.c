/* Starting the program and waiting for it, with the signals meant for it passed on. */
#include "record/record-impl.h"
#include "record/control.h"

#include "base/error.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* What `time` and `perf` pass on: a kill() aimed at callpath is meant for the program. */
static const int forwarded[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};
#define NFORWARDED (sizeof forwarded / sizeof forwarded[0])

static volatile pid_t child_pid;

static void forward(int sig, siginfo_t *info, void *uc)
{
	(void)uc;
	/* The terminal's ^C, ^\ and hang-up come from the kernel to the whole foreground
	 * process group: the program has its own copy already. */
	if (info && info->si_code == SI_KERNEL)
		return;
	if (child_pid > 0)
		kill(child_pid, sig);
}

static void block_forwarded(sigset_t *old)
{
	sigset_t set;
	sigemptyset(&set);
	for (size_t i = 0; i < NFORWARDED; i++)
		sigaddset(&set, forwarded[i]);
	sigprocmask(SIG_BLOCK, &set, old);
}

static void install_forwarding(struct sigaction *saved)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = forward;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < NFORWARDED; i++)
		sigaction(forwarded[i], &sa, &saved[i]);
}

static void restore_signals(const struct sigaction *saved)
{
	for (size_t i = 0; i < NFORWARDED; i++)
		sigaction(forwarded[i], &saved[i], NULL);
}

static int wait_child(pid_t pid, struct cp_record_result *res)
{
	int status;
	siginfo_t si;
	/* Ended but not reaped yet: its pid cannot be reused while forwarding stops. */
	while (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOWAIT) < 0 && errno == EINTR)
		;
	child_pid = 0;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return cp_error(CP_EIO, "waitpid failed: %s", strerror(errno));
	if (WIFSIGNALED(status)) {
		res->signal = WTERMSIG(status);
		res->status = 128 + WTERMSIG(status);
	} else {
		res->status = WEXITSTATUS(status);
	}
	return 0;
}

int cp_record_spawn(const struct cp_record_opts *o, struct cp_record_result *res)
{
	struct sigaction saved[NFORWARDED];
	sigset_t old;
	fflush(NULL);
	/* No signal between fork and the handlers is lost: they wait, blocked. */
	block_forwarded(&old);
	pid_t pid = fork();
	if (pid < 0) {
		int err = errno;
		sigprocmask(SIG_SETMASK, &old, NULL);
		return cp_error(CP_EIO, "fork failed: %s", strerror(err));
	}
	if (pid == 0) {
		sigprocmask(SIG_SETMASK, &old, NULL);
		cp_record_child_environment(o, res);
		execvp(o->argv[0], o->argv);
		fprintf(stderr, "callpath %s: cannot run %s: %s\n", o->name, o->argv[0],
			strerror(errno));
		_exit(127);
	}
	child_pid = pid;
	install_forwarding(saved);
	sigprocmask(SIG_SETMASK, &old, NULL);
	int rc = wait_child(pid, res);
	if (o->control)
		cp_control_sweep(res->outdir);
	/* Blocked while the handlers go: a late signal then acts on callpath itself. */
	block_forwarded(&old);
	child_pid = 0;
	restore_signals(saved);
	sigprocmask(SIG_SETMASK, &old, NULL);
	return rc;
}
