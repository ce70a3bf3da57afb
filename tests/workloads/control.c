/* Workload for the control channel (tests/e2e/probe-pid*.sh): probes inserted and removed
 * from outside while threads run.
 *   control PIDFILE GOFILE NTHREADS ITER
 * Writes its pid to PIDFILE, then runs NTHREADS threads that call hot() without pause
 * until GOFILE exists (the test makes it when it is done changing probes). Then each of
 * NTHREADS new threads calls counted() and uncounted() ITER times each, and it prints
 *   hot H counted C uncounted U
 * with the calls it made itself. hot() and counted() have frame-pointer prologues (push
 * %rbp at byte 0, mov %rsp,%rbp at 1, sub/lea at 4): threads are often stopped at an
 * instruction boundary inside the 5 bytes a probe overwrites, and hot's 5 bytes cross a
 * 16-byte line (docs/internals/patch.md, "Writing into running code"). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))
#define MAX_THREADS 64

long hot(long x);
long counted(long x);
void tiny(void); /* too short to probe */
__asm__(".text\n"
	".p2align 4\n"
	"	.byte 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90\n"
	".globl hot\n"
	".type hot, @function\n"
	"hot:\n" /* at 16n+13: the 5 entry bytes cross a 16-byte line */
	"	pushq %rbp\n"
	"	movq %rsp, %rbp\n"
	"	subq $16, %rsp\n"
	"	leaq 1(%rdi), %rax\n"
	"	movq %rax, -8(%rbp)\n"
	"	movq -8(%rbp), %rax\n"
	"	leave\n"
	"	ret\n"
	".size hot, .-hot\n"
	".p2align 4\n"
	".globl counted\n"
	".type counted, @function\n"
	"counted:\n"
	"	pushq %rbp\n"
	"	movq %rsp, %rbp\n"
	"	leaq 3(%rdi), %rax\n"
	"	popq %rbp\n"
	"	ret\n"
	".size counted, .-counted\n"
	".globl tiny\n"
	".type tiny, @function\n"
	"tiny:\n"
	"	ret\n"
	".size tiny, .-tiny\n");

static volatile int stop;
static long iter;
static const char *go_file;
static long hot_calls, counted_calls, uncounted_calls;
static volatile long sink;

NOINLINE long uncounted(long x)
{
	__asm__ volatile("" : "+r"(x));
	return x + 5;
}

static void *spin(void *arg)
{
	long n = 0, s = 0;
	(void)arg;
	while (!stop) {
		s += hot(n);
		n++;
	}
	sink += s;
	__atomic_add_fetch(&hot_calls, n, __ATOMIC_RELAXED);
	return NULL;
}

static void *phase2(void *arg)
{
	long s = 0;
	(void)arg;
	for (long i = 0; i < iter; i++) {
		s += counted(i);
		s += uncounted(i);
	}
	sink += s;
	__atomic_add_fetch(&counted_calls, iter, __ATOMIC_RELAXED);
	__atomic_add_fetch(&uncounted_calls, iter, __ATOMIC_RELAXED);
	return NULL;
}

static void run_threads(int n, void *(*fn)(void *))
{
	pthread_t th[MAX_THREADS];
	for (int i = 0; i < n; i++)
		pthread_create(&th[i], NULL, fn, NULL);
	if (fn == spin) {
		struct stat st;
		for (int waited = 0; stat(go_file, &st) && waited < 60000; waited += 5)
			usleep(5000);
		stop = 1;
	}
	for (int i = 0; i < n; i++)
		pthread_join(th[i], NULL);
}

int main(int argc, char **argv)
{
	if (argc != 5)
		return 2;
	int n = atoi(argv[3]);
	iter = atol(argv[4]);
	if (n < 1 || n > MAX_THREADS)
		return 2;
	go_file = argv[2];
	char tmp[4096];
	snprintf(tmp, sizeof tmp, "%s.tmp", argv[1]);
	FILE *f = fopen(tmp, "w");
	if (!f)
		return 2;
	fprintf(f, "%d\n", (int)getpid());
	fclose(f);
	rename(tmp, argv[1]);
	tiny();
	run_threads(n, spin);
	run_threads(n, phase2);
	printf("hot %ld counted %ld uncounted %ld\n", hot_calls, counted_calls, uncounted_calls);
	return 0;
}
