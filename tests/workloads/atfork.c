/* fork while another thread loads libraries under a lock the program's own pthread_atfork
 * prepare handler takes. A profiler that takes its module lock before the program's
 * prepare handlers run deadlocks here: fork holds the profiler's lock and waits for L,
 * the other thread holds L and waits in dlopen for the profiler's lock.
 * Then a process made by a fork inside libc (daemon()) does measurable work in
 * daemon_work(), reporting back through a pipe.
 * usage: atfork [ROUNDS] [DAEMON_UNITS] */
#include "common.h"
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

volatile uint64_t workload_sink;
static pthread_mutex_t lock_l = PTHREAD_MUTEX_INITIALIZER;
static volatile int stop;
static char libpath[4096];

static void prepare(void)
{
	pthread_mutex_lock(&lock_l);
}

static void release(void)
{
	pthread_mutex_unlock(&lock_l);
}

static void *loader(void *arg)
{
	(void)arg;
	while (!stop) {
		pthread_mutex_lock(&lock_l);
		void *h = dlopen(libpath, RTLD_NOW | RTLD_LOCAL);
		if (h)
			dlclose(h);
		pthread_mutex_unlock(&lock_l);
	}
	return NULL;
}

NOINLINE static void daemon_work(uint64_t units)
{
	uint64_t x = 1;
	for (uint64_t i = 0; i < units; i++)
		x = x * 6364136223846793005ull + i;
	workload_sink += x;
}

/* A child calls daemon(): libc forks internally (not through the fork symbol) and the
 * child's copy exits, leaving the grandchild to work. */
static void run_daemon(uint64_t units)
{
	int fds[2];
	if (pipe(fds))
		return;
	pid_t pid = fork();
	if (pid == 0) {
		close(fds[0]);
		if (daemon(1, 1))
			_exit(1);
		daemon_work(units);
		char c = 'x';
		if (write(fds[1], &c, 1) != 1)
			_exit(1);
		exit(0);
	}
	close(fds[1]);
	waitpid(pid, NULL, 0);
	char c;
	if (read(fds[0], &c, 1) != 1)
		fprintf(stderr, "atfork: the daemon did not report\n");
	close(fds[0]);
	usleep(100000); /* let it finish its profile */
}

int main(int argc, char **argv)
{
	long rounds = arg_or(argc, argv, 1, 300);
	snprintf(libpath, sizeof libpath, "%s", argv[0]);
	char *slash = strrchr(libpath, '/');
	snprintf(slash ? slash + 1 : libpath,
		 sizeof libpath - (size_t)(slash ? slash + 1 - libpath : 0), "libdlwork.so");
	pthread_atfork(prepare, release, release);
	pthread_t th;
	pthread_create(&th, NULL, loader, NULL);
	for (long i = 0; i < rounds; i++) {
		pid_t pid = fork();
		if (pid == 0)
			_exit(0);
		if (pid > 0)
			waitpid(pid, NULL, 0);
	}
	stop = 1;
	pthread_join(th, NULL);
	long units = arg_or(argc, argv, 2, 0);
	if (units > 0)
		run_daemon((uint64_t)units);
	printf("atfork: %ld forks done\n", rounds);
	return 0;
}
