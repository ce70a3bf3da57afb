/* RTLD_NEXT resolution of the interposed functions (see real.h). */
#include "runtime/interpose/real.h"
#include "runtime/core/runtime.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <unistd.h>

struct cp_real cp_real;
void cp_signal_set_real_sigaction(int (*fn)(int, const struct sigaction *, struct sigaction *))
	CP_HIDDEN;

void *cp_real_resolve(void **slot, const char *name)
{
	void *p = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
	if (p)
		return p;
	p = dlsym(RTLD_NEXT, name);
	if (!p) {
		static const char msg[] = "callpath runtime: a libc function it wraps is missing\n";
		(void)!write(2, msg, sizeof msg - 1);
		abort();
	}
	__atomic_store_n(slot, p, __ATOMIC_RELEASE);
	return p;
}

void cp_real_init(void)
{
	CP_REAL(pthread_create);
	CP_REAL(execve);
	CP_REAL(execvpe);
	CP_REAL(posix_spawn);
	CP_REAL(posix_spawnp);
	CP_REAL(dlopen);
	CP_REAL(dlclose);
	CP_REAL(sigaction);
	CP_REAL(signal);
	CP_REAL(sysv_signal);
	CP_REAL(sigprocmask);
	CP_REAL(pthread_sigmask);
	CP_REAL(exit);
	CP_REAL(_exit);
	CP_REAL(_Exit);
	CP_REAL(nanosleep);
	CP_REAL(clock_nanosleep);
	CP_REAL(poll);
	CP_REAL(select);
	CP_REAL(epoll_wait);
	CP_REAL(sem_wait);
	CP_REAL(sem_timedwait);
	CP_REAL(pause);
	CP_REAL(close);
	CP_REAL(close_range);
	CP_REAL(closefrom);
	cp_signal_set_real_sigaction(cp_real.sigaction);
}
