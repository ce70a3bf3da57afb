/* The cputime source's state, shared by its signal-time half (cputime.c: thread start and
 * stop, the handler's claims) and its init-time half (cputime-init.c: the choice of
 * mechanism at process start). Private to sample/. */
#ifndef CP_RUNTIME_SAMPLE_CPUTIME_INTERNAL_H
#define CP_RUNTIME_SAMPLE_CPUTIME_INTERNAL_H

#include "runtime/core/runtime.h"

#include <stdint.h>
#include <sys/types.h>

/* Counting kernel time too (a thread in a system call is using CPU; its sample lands on
 * the user PC the call returns to). Kernels that refuse it unprivileged get user-only. */
extern int cp_cputime_count_kernel CP_HIDDEN;

/* perf task-clock on thread tid (0: the caller), disabled, sampling every period ns; its
 * descriptor raised above CP_PERF_FD_FLOOR. AS-safe. fd or -errno. */
int cp_cputime_open(uint64_t period, pid_t tid) CP_HIDDEN;
/* Process start: task-clock if the kernel opens it, else POSIX CPU-time timers. 0. */
int cp_cputime_process_init(struct cp_metric *m) CP_HIDDEN;

#endif
