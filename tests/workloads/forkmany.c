/* A parent with a large touched heap forks many short-lived children: most of its CPU
 * time is the kernel copying its page tables inside fork().
 * Usage: forkmany [children, default 100] [MiB, default 256] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 100;
	size_t mib = argc > 2 ? (size_t)atol(argv[2]) : 256;
	char *mem = malloc(mib << 20);
	if (!mem)
		return 1;
	memset(mem, 1, mib << 20);
	for (int i = 0; i < n; i++) {
		pid_t pid = fork();
		if (pid < 0) {
			perror("fork");
			return 1;
		}
		if (pid == 0)
			_exit(mem[(size_t)i << 12] == 1 ? 0 : 1);
		int status;
		if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
			return 1;
	}
	printf("forkmany done %d\n", n);
	return 0;
}
