/* read-cost: what one read() of a perf_event group (PERF_FORMAT_GROUP with enabled/running
 * times, as sample/perf-event.c reads it in the handler) costs on this machine, for
 * cpu-clock, task-clock and page-faults, against a trivial system call (getppid).
 * Build: gcc -O2 -o read-cost read-cost.c */
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define N 200000

static double now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

int main(void)
{
	static const struct {
		const char *name;
		uint64_t config;
	} ev[] = {{"cpu-clock", PERF_COUNT_SW_CPU_CLOCK},
		  {"task-clock", PERF_COUNT_SW_TASK_CLOCK},
		  {"page-faults", PERF_COUNT_SW_PAGE_FAULTS}};
	double t0 = now_ns();
	for (int i = 0; i < N; i++)
		syscall(SYS_getppid);
	printf("%-12s %6.0f ns per call\n", "getppid", (now_ns() - t0) / N);
	for (unsigned k = 0; k < sizeof ev / sizeof ev[0]; k++) {
		struct perf_event_attr a;
		memset(&a, 0, sizeof a);
		a.size = sizeof a;
		a.type = PERF_TYPE_SOFTWARE;
		a.config = ev[k].config;
		a.sample_period = 1000000000; /* no overflow during the loop */
		a.read_format = PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED |
				PERF_FORMAT_TOTAL_TIME_RUNNING;
		int fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
		if (fd < 0) {
			perror(ev[k].name);
			continue;
		}
		uint64_t buf[8];
		t0 = now_ns();
		for (int i = 0; i < N; i++)
			if (read(fd, buf, sizeof buf) < 0)
				return 1;
		printf("%-12s %6.0f ns per group read\n", ev[k].name, (now_ns() - t0) / N);
		close(fd);
	}
	return 0;
}
