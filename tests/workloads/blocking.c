/* compute() burns CPU; wait_sleep() sleeps in nanosleep; wait_read() blocks in read() on a
 * pipe a child writes to later. Under realtime the waits dominate; under cputime they vanish.
 * Checks that interrupted sleeps still last as long as asked (behaviour unchanged). */
#include "common.h"
#include <stdio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

volatile uint64_t workload_sink;

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

NOINLINE void compute(void)
{
	workload_sink += spin(200000000, 3);
}

NOINLINE int wait_sleep(double seconds)
{
	struct timespec ts = {(time_t)seconds, (long)((seconds - (time_t)seconds) * 1e9)};
	double t0 = now();
	while (nanosleep(&ts, &ts) != 0)
		;
	return now() - t0 >= seconds * 0.999 ? 0 : 1;
}

NOINLINE int wait_read(double seconds)
{
	int fds[2];
	char c;
	if (pipe(fds))
		return 1;
	pid_t pid = fork();
	if (pid == 0) {
		struct timespec ts = {(time_t)seconds, (long)((seconds - (time_t)seconds) * 1e9)};
		while (nanosleep(&ts, &ts) != 0)
			;
		(void)!write(fds[1], "x", 1);
		_exit(0);
	}
	close(fds[1]);
	ssize_t n = read(fds[0], &c, 1);
	close(fds[0]);
	waitpid(pid, NULL, 0);
	return n == 1 ? 0 : 1;
}

int main(int argc, char **argv)
{
	double s = arg_or(argc, argv, 1, 400) / 1000.0;
	compute();
	int bad = wait_sleep(s);
	bad |= wait_read(s);
	printf("blocking done %s\n", bad ? "BAD" : "ok");
	return bad;
}
