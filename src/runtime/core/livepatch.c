/* The runtime's side of writing probes into running code (src/patch/poke.c,
 * docs/internals/patch.md): the SIGTRAP handler that moves a thread meeting one of our
 * breakpoints on to its target, chained with the program's; and the pc queries, sent as
 * the sampling signal (which no thread of the program can block: interpose/signals.c)
 * with sival_int CP_PCQ_MAGIC and answered in the sample handler. */
#include "runtime/core/runtime.h"
#include "runtime/probe/probe.h"

#include <errno.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/sigsafe/sigsafe.h"
#include "base/sigsafe/banned.h"

static struct sigaction app_trap; /* the program's SIGTRAP action (or our fatal handler) */
static volatile int trap_installed;

static int ask(pid_t tid)
{
	if (tid == cp_rt.control_tid)
		return -1; /* blocks every signal; runs no code of the program's */
	siginfo_t si;
	memset(&si, 0, sizeof si);
	si.si_signo = cp_rt.signo;
	si.si_code = SI_QUEUE;
	si.si_pid = cp_ss_getpid();
	si.si_uid = getuid();
	si.si_value.sival_int = CP_PCQ_MAGIC;
	if (syscall(SYS_rt_tgsigqueueinfo, si.si_pid, tid, cp_rt.signo, &si) && errno == ESRCH)
		return -1;
	return 0;
}

int cp_livepatch_answer(const siginfo_t *si, void *ucv)
{
	if (si->si_code != SI_QUEUE || si->si_value.sival_int != CP_PCQ_MAGIC ||
	    si->si_pid != cp_ss_getpid())
		return 0;
	cp_patch_pc_report(ucv);
	return 1;
}

static void trap_handler(int sig, siginfo_t *si, void *ucv)
{
	if (si->si_code == SI_KERNEL && cp_patch_trap(ucv))
		return;
	/* The default action: terminate (with a core), as without us. */
	if (!cp_signal_chain(&app_trap, sig, si, ucv) && app_trap.sa_handler == SIG_DFL)
		cp_signal_default_action(sig);
}

void cp_livepatch_install(void)
{
	/* Without it, cp_patch_poke refuses (no pc query): probes only while alone. */
	if (cp_signal_handler_install(SIGTRAP, trap_handler, SA_ONSTACK, NULL, &app_trap))
		return;
	trap_installed = 1;
	cp_patch_set_pc_query(ask);
	cp_patch_sync_init();
}

int cp_livepatch_sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	if (sig != SIGTRAP || !trap_installed)
		return 0;
	struct sigaction prev = app_trap;
	if (cp_signal_is_fatal_handler(&prev)) {
		memset(&prev, 0, sizeof prev);
		prev.sa_handler = SIG_DFL;
	}
	if (act)
		app_trap = *act;
	if (old)
		*old = prev;
	return 1;
}
