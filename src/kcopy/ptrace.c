/* ptrace for attach --inject (docs/internals/inject.md): stopping every thread of a process
 * (PTRACE_SEIZE + PTRACE_INTERRUPT), and calling a function of the target in one stopped
 * thread with its registers and extended state saved and restored around the call. */
#include "kcopy/inject-internal.h"

#include "base/error.h"

#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int seized(const struct kc_stopped *s, pid_t tid)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->t[i].tid == tid)
			return 1;
	return 0;
}

/* Waits for tid's first stop after the interrupt; a signal that arrived first is kept to be
 * delivered when the thread is released. 0, or -1 if the thread ended. */
static int wait_stopped(struct kc_thread_stop *t)
{
	int st;
	for (;;) {
		pid_t w = waitpid(t->tid, &st, __WALL);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 || WIFEXITED(st) || WIFSIGNALED(st))
			return -1;
		if (!WIFSTOPPED(st))
			continue;
		int event = st >> 16, sig = WSTOPSIG(st);
		if (event == PTRACE_EVENT_STOP)
			return 0;
		/* A signal-delivery stop: keep its signal for the release; stopped now. */
		t->pending = sig;
		return 0;
	}
}

/* One pass over /proc/pid/task: seizes the threads not seized yet. The count of new
 * ones, or a CP_E* code. */
static int seize_pass(pid_t pid, struct kc_stopped *s)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
	DIR *d = opendir(path);
	if (!d)
		return cp_error(CP_ENOENT, "process %d has ended", (int)pid);
	int added = 0, rc = 0;
	for (struct dirent *e; (e = readdir(d)) && !rc;) {
		pid_t tid = (pid_t)atoi(e->d_name);
		if (tid <= 0 || seized(s, tid) || s->n >= KC_MAX_STOPPED)
			continue;
		if (ptrace(PTRACE_SEIZE, tid, 0, 0)) {
			if (errno == ESRCH)
				continue; /* ended meanwhile */
			rc = kc_ptrace_refusal(pid, errno);
			break;
		}
		struct kc_thread_stop *t = &s->t[s->n++];
		memset(t, 0, sizeof *t);
		t->tid = tid;
		if (ptrace(PTRACE_INTERRUPT, tid, 0, 0) || wait_stopped(t))
			s->n--; /* ended meanwhile: nothing to release */
		else
			added++;
	}
	closedir(d);
	return rc ? rc : added;
}

int kc_stop_all(pid_t pid, struct kc_stopped *s)
{
	s->n = 0;
	int rc;
	/* Until a pass finds no thread started since the previous one. */
	while ((rc = seize_pass(pid, s)) > 0)
		;
	if (rc < 0) {
		kc_release_all(s);
		return rc;
	}
	if (!s->n)
		return cp_error(CP_ENOENT, "process %d has ended", (int)pid);
	return 0;
}

void kc_release(struct kc_thread_stop *t)
{
	if (t->tid > 0)
		ptrace(PTRACE_DETACH, t->tid, 0, (void *)(long)t->pending);
	t->tid = 0;
}

void kc_release_all(struct kc_stopped *s)
{
	for (size_t i = 0; i < s->n; i++)
		kc_release(&s->t[i]);
	s->n = 0;
}

int kc_regs_get(pid_t tid, struct user_regs_struct *regs)
{
	return ptrace(PTRACE_GETREGS, tid, 0, regs) ? -1 : 0;
}

/* The extended state (x87, SSE, AVX...): the callee may clobber any vector register. */
static int xstate(pid_t tid, int set, void *buf, size_t *len)
{
	struct iovec iov = {buf, *len};
	if (ptrace(set ? PTRACE_SETREGSET : PTRACE_GETREGSET, tid, (void *)NT_X86_XSTATE, &iov))
		return -1;
	*len = iov.iov_len;
	return 0;
}

static int write_mem(pid_t tid, uintptr_t addr, const void *data, size_t len)
{
	struct iovec local = {(void *)data, len}, remote = {(void *)addr, len};
	if (process_vm_writev(tid, &local, 1, &remote, 1, 0) == (ssize_t)len)
		return 0;
	/* Fallback word by word (process_vm_writev refused, e.g. by an LSM). */
	for (size_t off = 0; off < len; off += sizeof(long)) {
		long word = 0;
		size_t n = len - off < sizeof word ? len - off : sizeof word;
		if (n < sizeof word) {
			errno = 0;
			word = ptrace(PTRACE_PEEKDATA, tid, (void *)(addr + off), 0);
			if (errno)
				return -1;
		}
		memcpy(&word, (const char *)data + off, n);
		if (ptrace(PTRACE_POKEDATA, tid, (void *)(addr + off), (void *)word))
			return -1;
	}
	return 0;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Runs the thread until the call returns to address 0 (a SIGSEGV stop at rip 0); other
 * signals are delivered to it (its handlers run nested, as for any interruption). */
static int run_call(pid_t tid, uint64_t *ret, double timeout_s)
{
	double end = now_s() + timeout_s;
	int sig = 0, st, last = 0;
	unsigned long stops = 0, passed = 0; /* said when the call does not return */
	for (;;) {
		if (ptrace(PTRACE_CONT, tid, 0, (void *)(long)sig))
			return cp_error(CP_ENOENT, "thread %d ended during the call", (int)tid);
		pid_t w;
		while ((w = waitpid(tid, &st, __WALL | WNOHANG)) == 0 && now_s() < end)
			usleep(200);
		if (w == 0)
			return cp_error(
			    CP_EIO,
			    "the call in thread %d did not return in %.0f s (%lu stops, "
			    "%lu signals passed on, the last %d)",
			    (int)tid, timeout_s, stops, passed, last);
		if (w < 0 || !WIFSTOPPED(st))
			return cp_error(CP_ENOENT, "the process ended during the call");
		stops++;
		sig = WSTOPSIG(st);
		if ((st >> 16) == PTRACE_EVENT_STOP) {
			sig = 0;
			continue;
		}
		struct user_regs_struct r;
		if (sig == SIGSEGV && !kc_regs_get(tid, &r) && r.rip == 0) {
			*ret = r.rax;
			return 0;
		}
		if (sig == SIGSEGV || sig == SIGBUS || sig == SIGILL)
			return cp_error(CP_EIO, "the call in thread %d faulted (signal %d)",
					(int)tid, sig);
		passed++;
		last = sig;
	}
}

int kc_remote_call(pid_t tid, uintptr_t fn, const uint64_t *args, int nargs, const void *data,
		   size_t data_len, uint64_t *ret, double timeout_s)
{
	struct user_regs_struct saved, r;
	static char xs[16384];
	size_t xlen = sizeof xs;
	if (kc_regs_get(tid, &saved))
		return cp_error(CP_ENOENT, "thread %d: cannot read its registers", (int)tid);
	int have_xs = !xstate(tid, 0, xs, &xlen);
	r = saved;
	/* Below the red zone: the data (args may point at it: KC_DATA), then a return address
	 * of 0, with the stack aligned as at a call. */
	uintptr_t base = (saved.rsp - 256 - data_len) & ~(uintptr_t)15;
	uintptr_t zero = 0;
	r.rsp = base - 8;
	if (write_mem(tid, base, data, data_len) || write_mem(tid, r.rsp, &zero, sizeof zero))
		return cp_error(CP_EIO, "thread %d: cannot write its stack", (int)tid);
	unsigned long long *argregs[] = {&r.rdi, &r.rsi, &r.rdx, &r.rcx, &r.r8, &r.r9};
	for (int i = 0; i < nargs && i < 6; i++)
		*argregs[i] = args[i] == KC_DATA ? base : args[i];
	r.rip = fn;
	r.rax = 0;
	r.orig_rax = (unsigned long long)-1; /* no system call restart on the way out */
	if (ptrace(PTRACE_SETREGS, tid, 0, &r))
		return cp_error(CP_EIO, "thread %d: cannot set its registers", (int)tid);
	int rc = run_call(tid, ret, timeout_s);
	/* The original state: an interrupted system call restarts as if nothing happened. */
	ptrace(PTRACE_SETREGS, tid, 0, &saved);
	if (have_xs)
		xstate(tid, 1, xs, &xlen);
	return rc;
}
