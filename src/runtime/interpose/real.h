/* The next definitions (RTLD_NEXT) of every function the runtime interposes. Resolved at
 * init, and lazily by each wrapper in case it runs before our constructor. */
#ifndef CP_RUNTIME_REAL_H
#define CP_RUNTIME_REAL_H

#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <spawn.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <time.h>

struct cp_real {
	int (*pthread_create)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
	int (*execve)(const char *, char *const[], char *const[]);
	int (*execvpe)(const char *, char *const[], char *const[]);
	int (*posix_spawn)(pid_t *, const char *, const posix_spawn_file_actions_t *,
			   const posix_spawnattr_t *, char *const[], char *const[]);
	int (*posix_spawnp)(pid_t *, const char *, const posix_spawn_file_actions_t *,
			    const posix_spawnattr_t *, char *const[], char *const[]);
	void *(*dlopen)(const char *, int);
	void *(*dlmopen)(long, const char *, int);
	int (*dlclose)(void *);
	int (*sigaction)(int, const struct sigaction *, struct sigaction *);
	sighandler_t (*signal)(int, sighandler_t);
	sighandler_t (*sysv_signal)(int, sighandler_t);
	int (*sigprocmask)(int, const sigset_t *, sigset_t *);
	int (*pthread_sigmask)(int, const sigset_t *, sigset_t *);
	void (*exit)(int) __attribute__((noreturn));
	void (*_exit)(int) __attribute__((noreturn));
	void (*_Exit)(int) __attribute__((noreturn));
	int (*nanosleep)(const struct timespec *, struct timespec *);
	int (*clock_nanosleep)(clockid_t, int, const struct timespec *, struct timespec *);
	int (*poll)(struct pollfd *, nfds_t, int);
	int (*select)(int, fd_set *, fd_set *, fd_set *, struct timeval *);
	int (*epoll_wait)(int, struct epoll_event *, int, int);
	int (*sem_wait)(sem_t *);
	int (*sem_timedwait)(sem_t *, const struct timespec *);
	int (*pause)(void);
	int (*close)(int);
	int (*close_range)(unsigned, unsigned, int);
	void (*closefrom)(int);
	int (*libc_start_main)(int (*)(int, char **, char **), int, char **, void (*)(void),
			       void (*)(void), void (*)(void), void *);
};

extern struct cp_real cp_real __attribute__((visibility("hidden")));

/* Resolves one entry if still NULL (wrappers call this before using it). */
void *cp_real_resolve(void **slot, const char *name) __attribute__((visibility("hidden")));
#define CP_REAL(fn) \
	((__typeof__(cp_real.fn))cp_real_resolve((void **)&cp_real.fn, #fn))

#endif
