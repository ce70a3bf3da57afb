/* Process lifecycle: fork (the child gets a fresh profile), exec (followed by default:
 * our LD_PRELOAD and CALLPATH_* settings are kept in the new environment; with
 * CALLPATH_FOLLOW_EXEC=0 they are removed), exit/_exit (files finished), and
 * __libc_start_main (main's return value is the exit status we record). */
#include "runtime/core/runtime.h"
#include "runtime/interpose/real.h"
#include "runtime/probe/probe.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

extern char **environ;

/* fork is followed through pthread_atfork, not by wrapping fork(): the handlers then run
 * for forks made inside libc too (daemon()), and in the right order around the program's
 * own handlers: prepare handlers run in reverse order of registration, so ours (registered
 * at init, before the program's constructors) takes the module registry's lock only after
 * the program's prepare handlers have taken their locks, never holding it while they wait
 * for a lock whose holder needs the registry (dlopen). The child gets a fresh profile.
 *
 * Samples stay on across fork: its CPU time (copying a large parent's page tables) is the
 * program's and belongs to the fork call site. The handler is lock-free and finishes before
 * the fork system call starts, so the child never inherits a half-inserted sample; the
 * child has no sample source until cp_rt_after_fork_child begins its thread (perf events
 * are routed to the parent's tids, POSIX timers are not inherited). vfork and _Fork run no
 * handlers: such a child is foreign (cp_rt_foreign_child) and leaves the parent's files
 * alone. */
static void fork_prepare(void)
{
	cp_dl_fork_prepare();
	cp_probe_fork_prepare(); /* after the registry's lock: dlopen takes them in this order */
}

static void fork_parent(void)
{
	cp_probe_fork_parent();
	cp_dl_fork_parent();
}

static void fork_child(void)
{
	cp_dl_fork_child();
	cp_probe_fork_child();
	cp_rt_after_fork_child();
}

void cp_fork_hooks_install(void)
{
	pthread_atfork(fork_prepare, fork_parent, fork_child);
}

/* The variables that make a new image profiled. */
static int is_our_var(const char *kv)
{
	return !strncmp(kv, "CALLPATH_", 9) || !strncmp(kv, "LD_PRELOAD=", 11);
}

/* The environment of a new image: on the stack for ordinary sizes, mmap'd (a system
 * call, safe in a vfork child) for huge ones; never truncated. */
struct exec_envbuf {
	char **v;
	size_t bytes; /* mmap'd size, 0 when v is small[] */
	char *small[256];
};

static size_t env_count(char *const env[])
{
	size_t n = 0;
	while (env && env[n])
		n++;
	return n;
}

/* Builds the environment for a new image (NULL-terminated). Following: every CALLPATH_*
 * and LD_PRELOAD of ours that the program's envp lacks is added (as it was at start); not
 * following: they are removed. Falls back to envp itself if no memory. */
static char *const *exec_env(char *const envp[], struct exec_envbuf *b)
{
	size_t cap = env_count(envp) + env_count(cp_saved_env) + 1, n = 0;
	b->v = b->small;
	b->bytes = 0;
	if (cap > sizeof b->small / sizeof b->small[0]) {
		void *p = mmap(NULL, cap * sizeof(char *), PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			return envp;
		b->v = p;
		b->bytes = cap * sizeof(char *);
	}
	for (size_t i = 0; envp && envp[i]; i++)
		if (cp_rt.follow_exec || !is_our_var(envp[i]))
			b->v[n++] = envp[i];
	for (size_t i = 0; cp_rt.follow_exec && cp_saved_env[i]; i++) {
		size_t klen = strcspn(cp_saved_env[i], "=") + 1;
		int present = 0;
		for (size_t k = 0; k < n && !present; k++)
			present = !strncmp(b->v[k], cp_saved_env[i], klen);
		if (!present)
			b->v[n++] = cp_saved_env[i];
	}
	b->v[n] = NULL;
	return b->v;
}

static void exec_env_release(struct exec_envbuf *b)
{
	if (b->bytes)
		munmap(b->v, b->bytes);
}

CP_EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
	typeof(cp_real.execve) real = CP_REAL(execve);
	if (!cp_rt.active)
		return real(path, argv, envp);
	struct exec_envbuf eb;
	char *const *env = exec_env(envp, &eb);
	if (cp_rt_foreign_child())
		return real(path, argv, env);
	cp_rt_before_exec();
	int rc = real(path, argv, env);
	int err = errno;
	exec_env_release(&eb);
	cp_rt_exec_failed();
	errno = err;
	return rc;
}

CP_EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
	typeof(cp_real.execvpe) real = CP_REAL(execvpe);
	if (!cp_rt.active)
		return real(file, argv, envp);
	struct exec_envbuf eb;
	char *const *env = exec_env(envp, &eb);
	if (cp_rt_foreign_child())
		return real(file, argv, env);
	cp_rt_before_exec();
	int rc = real(file, argv, env);
	int err = errno;
	exec_env_release(&eb);
	cp_rt_exec_failed();
	errno = err;
	return rc;
}

CP_EXPORT int execv(const char *path, char *const argv[])
{
	return execve(path, argv, environ);
}

CP_EXPORT int execvp(const char *file, char *const argv[])
{
	return execvpe(file, argv, environ);
}

/* execl* take their arguments as varargs; collect them (bounded) and call the v form. */
#define CP_ARGS_MAX 1024
#define COLLECT_ARGS(arg0, ap, argv)                                                               \
	do {                                                                                       \
		size_t n_ = 0;                                                                     \
		argv[n_++] = (char *)(arg0);                                                       \
		while (argv[n_ - 1] && n_ < CP_ARGS_MAX)                                           \
			argv[n_++] = va_arg(ap, char *);                                           \
		if (argv[n_ - 1]) {                                                                \
			errno = E2BIG;                                                             \
			va_end(ap);                                                                \
			return -1;                                                                 \
		}                                                                                  \
	} while (0)

CP_EXPORT int execl(const char *path, const char *arg, ...)
{
	char *argv[CP_ARGS_MAX];
	va_list ap;
	va_start(ap, arg);
	COLLECT_ARGS(arg, ap, argv);
	va_end(ap);
	return execve(path, argv, environ);
}

CP_EXPORT int execlp(const char *file, const char *arg, ...)
{
	char *argv[CP_ARGS_MAX];
	va_list ap;
	va_start(ap, arg);
	COLLECT_ARGS(arg, ap, argv);
	va_end(ap);
	return execvpe(file, argv, environ);
}

CP_EXPORT int execle(const char *path, const char *arg, ...)
{
	char *argv[CP_ARGS_MAX];
	va_list ap;
	va_start(ap, arg);
	COLLECT_ARGS(arg, ap, argv);
	char *const *envp = va_arg(ap, char *const *);
	va_end(ap);
	return execve(path, argv, envp);
}

CP_EXPORT int posix_spawn(pid_t *pid, const char *path, const posix_spawn_file_actions_t *fa,
			  const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	typeof(cp_real.posix_spawn) real = CP_REAL(posix_spawn);
	if (!cp_rt.active)
		return real(pid, path, fa, attr, argv, envp);
	struct exec_envbuf eb;
	int rc = real(pid, path, fa, attr, argv, (char *const *)exec_env(envp, &eb));
	exec_env_release(&eb);
	return rc;
}

CP_EXPORT int posix_spawnp(pid_t *pid, const char *file, const posix_spawn_file_actions_t *fa,
			   const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	typeof(cp_real.posix_spawnp) real = CP_REAL(posix_spawnp);
	if (!cp_rt.active)
		return real(pid, file, fa, attr, argv, envp);
	struct exec_envbuf eb;
	int rc = real(pid, file, fa, attr, argv, (char *const *)exec_env(envp, &eb));
	exec_env_release(&eb);
	return rc;
}

CP_EXPORT void exit(int status)
{
	if (!cp_rt.exit_status_known && !cp_rt_foreign_child()) {
		cp_rt.exit_status = status & 0xff;
		cp_rt.exit_status_known = 1;
	}
	CP_REAL(exit)(status);
}

CP_EXPORT void _exit(int status)
{
	if (cp_rt_foreign_child())
		CP_REAL(_exit)(status);
	cp_rt.exit_status = status & 0xff;
	cp_rt.exit_status_known = 1;
	cp_rt_fini(0);
	CP_REAL(_exit)(status);
}

CP_EXPORT void _Exit(int status)
{
	if (cp_rt_foreign_child())
		CP_REAL(_Exit)(status);
	cp_rt.exit_status = status & 0xff;
	cp_rt.exit_status_known = 1;
	cp_rt_fini(0);
	CP_REAL(_Exit)(status);
}

static int (*app_main)(int, char **, char **);

/* Between libc and main: paths leave its frame out, as all of ours (runtime.h). */
static int main_wrapper(int argc, char **argv, char **envp)
{
	int status = app_main(argc, argv, envp);
	cp_rt.exit_status = status & 0xff;
	cp_rt.exit_status_known = 1;
	return status;
}

CP_EXPORT int __libc_start_main(int (*main)(int, char **, char **), int argc, char **argv,
				void (*init)(void), void (*fini)(void), void (*rtld_fini)(void),
				void *stack_end)
{
	typeof(cp_real.libc_start_main) real = CP_REAL(libc_start_main);
	app_main = main;
	return real(main_wrapper, argc, argv, init, fini, rtld_fini, stack_end);
}
