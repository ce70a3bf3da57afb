/* parent_work in the parent; the fork child runs child_work, then execs argv[1] (if given)
 * with the remaining arguments. The parent waits and returns the child's exit status. */
#include "common.h"
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

volatile uint64_t workload_sink;

NOINLINE void parent_work(void)
{
	workload_sink += spin(300000000, 5);
}

NOINLINE void child_work(void)
{
	workload_sink += spin(300000000, 9);
}

int main(int argc, char **argv)
{
	fflush(stdout);
	pid_t pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		child_work();
		if (argc > 1) {
			execv(argv[1], argv + 1);
			perror("execv");
			_exit(127);
		}
		_exit(0);
	}
	parent_work();
	int status = 0;
	waitpid(pid, &status, 0);
	printf("forkexec done %llu\n", (unsigned long long)(workload_sink & 1));
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
