/* The next definitions (RTLD_NEXT) of every function the runtime interposes, all in one
 * table. cp_real_init (the constructor) resolves them once; a wrapper reads its entry with
 * CP_REAL(fn): one load and a predicted branch, no call and no lookup. Only a wrapper that
 * runs before our constructor (another library's constructor calling it) takes the slow
 * path, which resolves that one entry.
 *
 * Module interpose/ (the exported wrappers): the runtime's top, may use every module. */
#ifndef CP_RUNTIME_REAL_H
#define CP_RUNTIME_REAL_H

#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <spawn.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/epoll.h>
#include <sys/msg.h>
#include <sys/select.h>
#include <sys/sem.h>
#include <sys/uio.h>
#include <time.h>

/* Each field is named after its function (real.c's table gives the name to resolve and,
 * where glibc has several versions, the version), except libc_start_main. */
struct cp_real {
	/* threads, processes, libraries, signals, exit (interpose/{threads,process,dl,
	 * signals}.c) */
	int (*pthread_create)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
	int (*execve)(const char *, char *const[], char *const[]);
	int (*execvpe)(const char *, char *const[], char *const[]);
	int (*posix_spawn)(pid_t *, const char *, const posix_spawn_file_actions_t *,
			   const posix_spawnattr_t *, char *const[], char *const[]);
	int (*posix_spawnp)(pid_t *, const char *, const posix_spawn_file_actions_t *,
			    const posix_spawnattr_t *, char *const[], char *const[]);
	void *(*dlopen)(const char *, int);
	int (*dlclose)(void *);
	int (*sigaction)(int, const struct sigaction *, struct sigaction *);
	sighandler_t (*signal)(int, sighandler_t);
	sighandler_t (*sysv_signal)(int, sighandler_t);
	int (*sigprocmask)(int, const sigset_t *, sigset_t *);
	int (*pthread_sigmask)(int, const sigset_t *, sigset_t *);
	void (*exit)(int) __attribute__((noreturn));
	void (*_exit)(int) __attribute__((noreturn));
	void (*_Exit)(int) __attribute__((noreturn));
	int (*libc_start_main)(int (*)(int, char **, char **), int, char **, void (*)(void),
			       void (*)(void), void (*)(void), void *);
	/* blocking calls restarted after our signals (interpose/{sleep,restart}.c) */
	int (*nanosleep)(const struct timespec *, struct timespec *);
	int (*clock_nanosleep)(clockid_t, int, const struct timespec *, struct timespec *);
	int (*poll)(struct pollfd *, nfds_t, int);
	int (*select)(int, fd_set *, fd_set *, fd_set *, struct timeval *);
	int (*epoll_wait)(int, struct epoll_event *, int, int);
	int (*sem_wait)(sem_t *);
	int (*sem_timedwait)(sem_t *, const struct timespec *);
	int (*pause)(void);
	int (*ppoll)(struct pollfd *, nfds_t, const struct timespec *, const sigset_t *);
	int (*pselect)(int, fd_set *, fd_set *, fd_set *, const struct timespec *,
		       const sigset_t *);
	int (*epoll_pwait)(int, struct epoll_event *, int, int, const sigset_t *);
	int (*epoll_pwait2)(int, struct epoll_event *, int, const struct timespec *,
			    const sigset_t *);
	int (*sigtimedwait)(const sigset_t *, siginfo_t *, const struct timespec *);
	int (*sigwaitinfo)(const sigset_t *, siginfo_t *);
	int (*sigsuspend)(const sigset_t *);
	int (*semop)(int, struct sembuf *, size_t);
	int (*semtimedop)(int, struct sembuf *, size_t, const struct timespec *);
	ssize_t (*msgrcv)(int, void *, size_t, long, int);
	int (*msgsnd)(int, const void *, size_t, int);
	/* descriptors (interpose/fds.c) */
	int (*close)(int);
	int (*close_range)(unsigned, unsigned, int);
	void (*closefrom)(int);
	/* -e wait (interpose/wait.c) */
	int (*pthread_mutex_lock)(pthread_mutex_t *);
	int (*pthread_mutex_trylock)(pthread_mutex_t *);
	int (*pthread_mutex_timedlock)(pthread_mutex_t *, const struct timespec *);
	int (*pthread_cond_wait)(pthread_cond_t *, pthread_mutex_t *);
	int (*pthread_cond_timedwait)(pthread_cond_t *, pthread_mutex_t *, const struct timespec *);
	int (*pthread_cond_clockwait)(pthread_cond_t *, pthread_mutex_t *, clockid_t,
				      const struct timespec *);
	int (*pthread_barrier_wait)(pthread_barrier_t *);
	int (*pthread_join)(pthread_t, void **);
	int (*pthread_rwlock_rdlock)(pthread_rwlock_t *);
	int (*pthread_rwlock_tryrdlock)(pthread_rwlock_t *);
	int (*pthread_rwlock_wrlock)(pthread_rwlock_t *);
	int (*pthread_rwlock_trywrlock)(pthread_rwlock_t *);
	/* -e io (interpose/io.c) */
	ssize_t (*read)(int, void *, size_t);
	ssize_t (*write)(int, const void *, size_t);
	ssize_t (*pread)(int, void *, size_t, off_t);
	ssize_t (*pwrite)(int, const void *, size_t, off_t);
	ssize_t (*pread64)(int, void *, size_t, off_t);
	ssize_t (*pwrite64)(int, const void *, size_t, off_t);
	ssize_t (*readv)(int, const struct iovec *, int);
	ssize_t (*writev)(int, const struct iovec *, int);
	ssize_t (*__read_chk)(int, void *, size_t, size_t);
	size_t (*fread)(void *, size_t, size_t, FILE *);
	size_t (*fwrite)(const void *, size_t, size_t, FILE *);
};

extern struct cp_real cp_real __attribute__((visibility("hidden")));

/* The slow path: resolves the entry at byte offset `off` of cp_real (aborts with a message
 * if libc lacks it: the wrapper could not do its job). */
void *cp_real_resolve(size_t off) __attribute__((visibility("hidden"), noinline, cold));

/* The real function behind wrapper `fn`. */
#define CP_REAL(fn)                                                                                \
	({                                                                                         \
		__typeof__(cp_real.fn) cp_real_fn_ =                                               \
		    __atomic_load_n(&cp_real.fn, __ATOMIC_RELAXED);                                \
		__builtin_expect(cp_real_fn_ != NULL, 1)                                           \
		    ? cp_real_fn_                                                                  \
		    : (__typeof__(cp_real.fn))cp_real_resolve(offsetof(struct cp_real, fn));       \
	})

#endif
