/* cputime's init-time half (cputime.c is the signal-time one): at process start, perf's
 * task-clock if the kernel opens it (with kernel time if allowed), else POSIX CPU-time
 * timers, with a note saying why. Never runs in a signal handler. */
#include "runtime/core/fds.h"
#include "runtime/sample/cputime-internal.h"

#include <errno.h>
#include <string.h>
#include <time.h>

int cp_cputime_process_init(struct cp_metric *m)
{
	int fd = cp_rt.no_perf ? -ENOSYS : cp_cputime_open(m->period, 0);
	if (fd == -EACCES || fd == -EPERM) {
		cp_cputime_count_kernel = 0;
		fd = cp_cputime_open(m->period, 0);
		if (fd >= 0)
			cp_rt_note("cputime: the kernel refuses to count kernel time for this user "
				   "(perf_event_paranoid); time in system calls is not sampled");
	}
	if (fd >= 0) {
		cp_fd_close(fd);
		m->mechanism = CP_MF_MECH_PERF_TASK_CLOCK;
		return 0;
	}
	m->mechanism = CP_MF_MECH_POSIX_TIMER;
	m->clock_id = CLOCK_THREAD_CPUTIME_ID;
	cp_rt_note("cputime: perf_event_open(task-clock) failed (%s)%s; falling back to POSIX "
		   "CPU-time timers, which fire only on the kernel tick: fewer samples than "
		   "asked (see the delivered rate)",
		   cp_rt.no_perf ? "CALLPATH_NO_PERF=1" : strerror(-fd),
		   fd == -EACCES || fd == -EPERM
		       ? " - check /proc/sys/kernel/perf_event_paranoid (<= 2 needed)"
		       : "");
	return 0;
}
