/* RTLD_NEXT resolution of the interposed functions (see real.h). */
#include "runtime/interpose/real.h"
#include "runtime/core/runtime.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <unistd.h>

struct cp_real cp_real;
void cp_signal_set_real_sigaction(int (*fn)(int, const struct sigaction *,
					    struct sigaction *)) CP_HIDDEN;

#define ENTRY(fn) offsetof(struct cp_real, fn), #fn

/* Condition variables have two versions in glibc (GLIBC_2.2.5 for old binaries, 2.3.2
 * current): plain dlsym may return the old one, which expects the old layout. */
static const struct real_entry {
	size_t off;
	const char *name, *version;
} entries[] = {
    {ENTRY(pthread_create), NULL},
    {ENTRY(execve), NULL},
    {ENTRY(execvpe), NULL},
    {ENTRY(posix_spawn), NULL},
    {ENTRY(posix_spawnp), NULL},
    {ENTRY(dlopen), NULL},
    {ENTRY(dlclose), NULL},
    {ENTRY(sigaction), NULL},
    {ENTRY(signal), NULL},
    {ENTRY(sysv_signal), NULL},
    {ENTRY(sigprocmask), NULL},
    {ENTRY(pthread_sigmask), NULL},
    {ENTRY(exit), NULL},
    {ENTRY(_exit), NULL},
    {ENTRY(_Exit), NULL},
    {offsetof(struct cp_real, libc_start_main), "__libc_start_main", NULL},
    {ENTRY(nanosleep), NULL},
    {ENTRY(clock_nanosleep), NULL},
    {ENTRY(poll), NULL},
    {ENTRY(select), NULL},
    {ENTRY(epoll_wait), NULL},
    {ENTRY(sem_wait), NULL},
    {ENTRY(sem_timedwait), NULL},
    {ENTRY(pause), NULL},
    {ENTRY(ppoll), NULL},
    {ENTRY(pselect), NULL},
    {ENTRY(epoll_pwait), NULL},
    {ENTRY(epoll_pwait2), NULL},
    {ENTRY(sigtimedwait), NULL},
    {ENTRY(sigwaitinfo), NULL},
    {ENTRY(sigsuspend), NULL},
    {ENTRY(semop), NULL},
    {ENTRY(semtimedop), NULL},
    {ENTRY(msgrcv), NULL},
    {ENTRY(msgsnd), NULL},
    {ENTRY(close), NULL},
    {ENTRY(close_range), NULL},
    {ENTRY(closefrom), NULL},
    {ENTRY(pthread_mutex_lock), NULL},
    {ENTRY(pthread_mutex_trylock), NULL},
    {ENTRY(pthread_mutex_timedlock), NULL},
    {ENTRY(pthread_cond_wait), "GLIBC_2.3.2"},
    {ENTRY(pthread_cond_timedwait), "GLIBC_2.3.2"},
    {ENTRY(pthread_cond_clockwait), NULL},
    {ENTRY(pthread_barrier_wait), NULL},
    {ENTRY(pthread_join), NULL},
    {ENTRY(pthread_rwlock_rdlock), NULL},
    {ENTRY(pthread_rwlock_tryrdlock), NULL},
    {ENTRY(pthread_rwlock_wrlock), NULL},
    {ENTRY(pthread_rwlock_trywrlock), NULL},
    {ENTRY(read), NULL},
    {ENTRY(write), NULL},
    {ENTRY(pread), NULL},
    {ENTRY(pwrite), NULL},
    {ENTRY(pread64), NULL},
    {ENTRY(pwrite64), NULL},
    {ENTRY(readv), NULL},
    {ENTRY(writev), NULL},
    {ENTRY(__read_chk), NULL},
    {ENTRY(fread), NULL},
    {ENTRY(fwrite), NULL},
};
_Static_assert(sizeof entries / sizeof entries[0] == sizeof(struct cp_real) / sizeof(void *),
	       "every member of struct cp_real has an entry");

/* Entry e's slot, resolved; NULL if libc lacks it (e.g. epoll_pwait2 before glibc 2.35). */
static void *resolve_entry(const struct real_entry *e)
{
	void **slot = (void **)((char *)&cp_real + e->off);
	void *p = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
	if (p)
		return p;
	p = e->version ? dlvsym(RTLD_NEXT, e->name, e->version) : NULL;
	if (!p)
		p = dlsym(RTLD_NEXT, e->name);
	if (p)
		__atomic_store_n(slot, p, __ATOMIC_RELEASE);
	return p;
}

void *cp_real_resolve(size_t off)
{
	for (size_t i = 0; i < sizeof entries / sizeof entries[0]; i++) {
		if (entries[i].off != off)
			continue;
		void *p = resolve_entry(&entries[i]);
		if (p)
			return p;
		break;
	}
	static const char msg[] = "callpath runtime: a libc function it wraps is missing\n";
	(void)!write(2, msg, sizeof msg - 1);
	abort();
}

void cp_real_init(void)
{
	for (size_t i = 0; i < sizeof entries / sizeof entries[0]; i++)
		resolve_entry(&entries[i]);
	cp_signal_set_real_sigaction(cp_real.sigaction);
}
