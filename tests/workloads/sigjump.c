/* A program whose SIGALRM handler siglongjmps back into a compute loop, with SIGALRM
 * arriving every 500 us. A sampling handler that can be interrupted by it is left half
 * done when the program's handler jumps away (its "busy" state never cleared), and every
 * later sample of the thread is lost. usage: sigjump [MILLISECONDS] */
#include "common.h"
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <sys/time.h>
#include <time.h>

volatile uint64_t workload_sink;
static sigjmp_buf env;
static volatile long jumps;

static void on_alarm(int sig)
{
	(void)sig;
	jumps++;
	siglongjmp(env, 1);
}

NOINLINE static void compute(void)
{
	for (;;)
		workload_sink = workload_sink * 6364136223846793005ull + 1;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
	double limit = (double)arg_or(argc, argv, 1, 1500) / 1000.0;
	struct sigaction sa = {0};
	sa.sa_handler = on_alarm;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);
	struct itimerval it = {{0, 500}, {0, 500}};
	setitimer(ITIMER_REAL, &it, NULL);
	double start = now_s();
	sigsetjmp(env, 1);
	if (now_s() - start < limit)
		compute();
	struct itimerval off = {{0, 0}, {0, 0}};
	setitimer(ITIMER_REAL, &off, NULL);
	printf("sigjump: %ld jumps\n", jumps);
	return 0;
}
