/* Installs its own SIGPROF handler and ITIMER_PROF, and its own SIGALRM handler with
 * ITIMER_REAL, blocks and unblocks signals with sigprocmask, and checks all of them still
 * behave: its handlers run, its timers fire, its mask is what it set. */
#include "common.h"
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>

volatile uint64_t workload_sink;
static volatile sig_atomic_t prof_ticks, alrm_ticks;

static void on_prof(int sig)
{
	prof_ticks++;
}

static void on_alrm(int sig)
{
	alrm_ticks++;
}

NOINLINE void busy(void)
{
	workload_sink += spin(150000000, 1);
}

int main(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_prof;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGPROF, &sa, NULL);
	sa.sa_handler = on_alrm;
	sigaction(SIGALRM, &sa, NULL);
	struct itimerval it = {{0, 10000}, {0, 10000}};
	setitimer(ITIMER_PROF, &it, NULL);
	setitimer(ITIMER_REAL, &it, NULL);

	sigset_t block, old, now;
	sigemptyset(&block);
	sigaddset(&block, SIGUSR1);
	sigprocmask(SIG_BLOCK, &block, &old);
	busy();
	busy();
	sigprocmask(SIG_SETMASK, NULL, &now);
	int mask_ok = sigismember(&now, SIGUSR1) == 1;
	sigprocmask(SIG_SETMASK, &old, NULL);

	struct itimerval off = {{0, 0}, {0, 0}};
	setitimer(ITIMER_PROF, &off, NULL);
	setitimer(ITIMER_REAL, &off, NULL);
	printf("ownsig prof=%s alrm=%s mask=%s\n", prof_ticks > 5 ? "ok" : "BAD",
	       alrm_ticks > 5 ? "ok" : "BAD", mask_ok ? "ok" : "BAD");
	return prof_ticks > 5 && alrm_ticks > 5 && mask_ok ? 0 : 1;
}
