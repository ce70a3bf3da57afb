/* A vfork child killed by a signal before it execs, then the parent works in parent_work().
 * The child shares the parent's memory: the profiler must not end the parent's profile. */
#include "common.h"
#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

volatile uint64_t workload_sink;

NOINLINE void parent_work(void)
{
	workload_sink += spin(400000000, 4);
}

int main(void)
{
	pid_t pid = vfork();
	if (pid == 0) {
		kill(getpid(), SIGTERM);
		_exit(127);
	}
	int status = 0;
	waitpid(pid, &status, 0);
	parent_work();
	printf("vforkdie child signalled=%d\n", WIFSIGNALED(status));
	return WIFSIGNALED(status) ? 0 : 1;
}
