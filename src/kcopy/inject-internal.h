/* Internal to attach --inject (inject.c, inject-safe.c, ptrace.c). */
#ifndef CP_KCOPY_INJECT_INTERNAL_H
#define CP_KCOPY_INJECT_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/user.h>

#define KC_MAX_STOPPED 4096

struct kc_thread_stop {
	pid_t tid;   /* 0: released */
	int pending; /* a signal that stopped it first, delivered at the release */
};

struct kc_stopped {
	struct kc_thread_stop t[KC_MAX_STOPPED];
	size_t n;
};

/* ---- ptrace.c ---- */

/* Seizes and interrupts every thread of pid (again until no new thread appeared). 0, or a
 * CP_E* code with the refusal's message (nothing stays seized then). */
int kc_stop_all(pid_t pid, struct kc_stopped *s);
void kc_release(struct kc_thread_stop *t);
void kc_release_all(struct kc_stopped *s);
int kc_regs_get(pid_t tid, struct user_regs_struct *regs);
/* An argument of kc_remote_call that stands for the address of the copied data. */
#define KC_DATA ((uint64_t)-2)
/* Calls fn(args...) in the stopped thread tid, data_len bytes of data copied below its stack
 * pointer first; *ret = its return value. The registers and extended state are restored
 * afterwards. 0 or a CP_E* code. */
int kc_remote_call(pid_t tid, uintptr_t fn, const uint64_t *args, int nargs, const void *data,
		   size_t data_len, uint64_t *ret, double timeout_s);
/* The message for a failed PTRACE_SEIZE of pid (ptrace_scope, another tracer, user). */
int kc_ptrace_refusal(pid_t pid, int err);

/* ---- inject-safe.c ---- */

struct kc_safety; /* the target's loader and allocator, found once */
struct kc_safety *kc_safety_open(pid_t pid);
void kc_safety_close(struct kc_safety *k);
/* Is the stopped thread tid at a point where it may call the loader: no frame of its stack
 * in the dynamic loader, in the allocator or another libc function that holds the loader's
 * or the allocator's locks? 1 safe, 0 not, -1 unreadable. */
int kc_thread_safe(struct kc_safety *k, pid_t tid);
/* The address of symbol name of the library whose path ends in suffix, as mapped in pid
 * now; 0 if not found. */
uintptr_t kc_symbol_in(pid_t pid, const char *suffix, const char *name);

#endif
