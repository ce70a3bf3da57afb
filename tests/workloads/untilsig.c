/* Burns CPU in burn() until a signal ends it (tests/e2e/record-signals.sh). Creates the file
 * argv[1] once running and 50 ms of CPU time into burn(), so the test signals a program
 * that is surely there and has samples in burn() however loaded the machine. With argv[2]
 * "catch", SIGUSR1 and SIGUSR2 are caught: it prints "caught N" and exits 0. With "count",
 * SIGINT is caught: after the first one it runs 300 ms more, then prints "caught 2 K
 * times" (K: how many arrived) and exits 0. It gives up after about 60 s, or argv[3]
 * seconds (exit 3): no signal came. */
#include "common.h"
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

volatile uint64_t workload_sink;
static volatile sig_atomic_t caught, times;

static void on_signal(int sig)
{
	caught = sig;
	times++;
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

NOINLINE void burn(void)
{
	workload_sink += spin(10000000, workload_sink);
}

int main(int argc, char **argv)
{
	int count = argc > 2 && !strcmp(argv[2], "count");
	if (argc > 2 && !strcmp(argv[2], "catch")) {
		signal(SIGUSR1, on_signal);
		signal(SIGUSR2, on_signal);
	}
	if (count)
		signal(SIGINT, on_signal);
	struct timespec cpu = {0, 0};
	while (cpu.tv_sec == 0 && cpu.tv_nsec < 50000000 &&
	       !clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu))
		burn();
	if (argc > 1) {
		int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd >= 0)
			close(fd);
	}
	time_t end = time(NULL) + (argc > 3 ? atoi(argv[3]) : 60);
	while (!caught && time(NULL) < end)
		burn();
	if (caught && count) {
		for (double t = now(); now() < t + 0.3;)
			burn();
		printf("caught %d %d times\n", (int)caught, (int)times);
		return 0;
	}
	if (caught) {
		printf("caught %d\n", (int)caught);
		return 0;
	}
	printf("no signal came\n");
	return 3;
}
