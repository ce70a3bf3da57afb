/* Workload for `callpath probe` (tests/e2e/probe-*.sh): every call count is known by
 * construction; each mode prints a checksum that must not change under probes.
 *   probe paths             work: 1000 from path_a, 3000 from path_b, 500 through a
 *                           pointer from path_ptr; tailer tail-calls tail_target 200x
 *   probe recurse           rec: 10 chains of depth 5 (10 calls per depth)
 *   probe longjmp           jumper: 100 calls, each longjmps out; then work: 7 calls
 *   probe libs DIR          lib_work 300x (shared lib), helper 11x here and 13x in the
 *                           lib (same name, both static), dl_work 17x (dlopen'd from DIR)
 *   probe threads           8 threads x 10000 calls of work from thread_main
 *   probe malloc            1000 malloc/free pairs from alloc_loop
 *   probe stress N          work N times from path_a
 *   probe refuse            calls the functions the refusal tests name
 *   probe signal            100 SIGUSR1 (handler on an alternate stack) raised from
 *                           sig_loop, each handler calls work once; sig_loop calls work
 *                           100 times itself
 *   probe control           work 10x, callpath_probe_insert("work"), work 20x,
 *                           callpath_probe_remove("work"), work 40x, insert again, work 5x
 *                           (all from control_calls): 25 probed calls
 *   probe fork              forker forks inside itself: the child calls work 5 times and
 *                           exits, the parent waits, then calls work 3 times */
#include <dlfcn.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

int lib_work(int x);
int lib_helpers(int n);

static volatile long sink;

NOINLINE int work(int x)
{
	__asm__ volatile("" : "+r"(x));
	return x * 3 + 1;
}

static NOINLINE int helper(int x)
{
	__asm__ volatile("" : "+r"(x));
	sink += x;
	return x + 1;
}

NOINLINE long path_a(long n)
{
	long s = 0;
	for (long i = 0; i < n; i++)
		s += work((int)i);
	return s;
}

NOINLINE long path_b(long n)
{
	long s = 0;
	for (long i = 0; i < n; i++)
		s += work((int)i);
	return s;
}

int (*volatile work_ptr)(int) = work;

NOINLINE long path_ptr(long n)
{
	long s = 0;
	for (long i = 0; i < n; i++)
		s += work_ptr((int)i);
	return s;
}

NOINLINE int tail_target(int x)
{
	__asm__ volatile("" : "+r"(x));
	return x * 11;
}

/* -O2 turns this into a jmp (checked by probe-paths.sh with objdump). */
NOINLINE int tailer(int x)
{
	return tail_target(x + 1);
}

NOINLINE int rec(int depth)
{
	if (depth <= 1)
		return work(depth);
	int r = rec(depth - 1) + 1;
	__asm__ volatile("" : "+r"(r));
	return r;
}

static jmp_buf jb;

NOINLINE void jumper(int i)
{
	sink += i;
	longjmp(jb, 1);
}

static void *thread_main(void *arg)
{
	long s = 0;
	for (int i = 0; i < 10000; i++)
		s += work(i);
	*(long *)arg = s;
	return NULL;
}

char *volatile escape;

NOINLINE long alloc_loop(int n)
{
	long s = 0;
	for (int i = 0; i < n; i++) {
		char *p = malloc(32 + (size_t)(i % 64));
		escape = p; /* or GCC drops the malloc/free pair */
		p[0] = (char)i;
		s += p[0];
		free(escape);
	}
	return s;
}

/* Too short to patch: xor eax,eax; ret (3 bytes). */
__asm__(".text\n.globl tiny\n.type tiny,@function\ntiny:\n xor %eax,%eax\n ret\n"
	".size tiny,.-tiny\n");
int tiny(void);

/* A loop back to byte 2 of the function: a jump into the patched bytes. */
__asm__(".text\n.globl loops_back\n.type loops_back,@function\nloops_back:\n"
	" xor %eax,%eax\n1: inc %eax\n dec %edi\n jg 1b\n ret\n.size loops_back,.-loops_back\n");
int loops_back(int n);

/* An IFUNC whose resolver picks work. */
static int (*resolve_pick(void))(int)
{
	return work;
}
int picked(int) __attribute__((ifunc("resolve_pick")));

static void on_usr1(int sig)
{
	sink += work(sig);
}

NOINLINE long sig_loop(int n)
{
	long s = 0;
	for (int i = 0; i < n; i++) {
		raise(SIGUSR1);
		s += work(i);
	}
	return s;
}

static long signal_mode(void)
{
	static char altstack[65536];
	stack_t ss = {.ss_sp = altstack, .ss_size = sizeof altstack};
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_usr1;
	sa.sa_flags = SA_ONSTACK;
	sigaltstack(&ss, NULL);
	sigaction(SIGUSR1, &sa, NULL);
	return sig_loop(100) + sink;
}

NOINLINE long forker(void)
{
	long s = 0;
	pid_t pid = fork();
	if (pid == 0) {
		for (int i = 0; i < 5; i++)
			s += work(i);
		exit(s == 35 ? 0 : 1);
	}
	int status = -1;
	waitpid(pid, &status, 0);
	for (int i = 0; i < 3; i++)
		s += work(i);
	return s + (WIFEXITED(status) ? WEXITSTATUS(status) : 100);
}

NOINLINE long control_calls(int n)
{
	long s = 0;
	for (int i = 0; i < n; i++)
		s += work(i);
	return s;
}

static long control_mode(void)
{
	int (*ins)(const char *) =
	    (int (*)(const char *))dlsym(RTLD_DEFAULT, "callpath_probe_insert");
	int (*rem)(const char *) =
	    (int (*)(const char *))dlsym(RTLD_DEFAULT, "callpath_probe_remove");
	long s = control_calls(10);
	int a = ins ? ins("work") : -2;
	s += control_calls(20);
	int b = rem ? rem("work") : -2;
	s += control_calls(40);
	int c = ins ? ins("work") : -2;
	s += control_calls(5);
	printf("control %d %d %d\n", a, b, c);
	return s;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "paths";
	volatile long s = 0;
	if (!strcmp(mode, "paths")) {
		s = path_a(1000) + path_b(3000) + path_ptr(500);
		for (int i = 0; i < 200; i++)
			s += tailer(i);
	} else if (!strcmp(mode, "recurse")) {
		for (int i = 0; i < 10; i++)
			s += rec(5);
	} else if (!strcmp(mode, "longjmp")) {
		for (volatile int i = 0; i < 100; i++)
			if (!setjmp(jb))
				jumper(i);
		for (int i = 0; i < 7; i++)
			s += work(i);
		s += sink;
	} else if (!strcmp(mode, "libs")) {
		char path[4096];
		snprintf(path, sizeof path, "%s/lib-probe-dl.so", argc > 2 ? argv[2] : ".");
		for (int i = 0; i < 300; i++)
			s += lib_work(i);
		for (int i = 0; i < 11; i++)
			s += helper(i);
		s += lib_helpers(13);
		void *h = dlopen(path, RTLD_NOW);
		if (!h) {
			fprintf(stderr, "dlopen %s: %s\n", path, dlerror());
			return 1;
		}
		int (*dl_work)(int) = (int (*)(int))dlsym(h, "dl_work");
		for (int i = 0; i < 17; i++)
			s += dl_work(i);
	} else if (!strcmp(mode, "threads")) {
		pthread_t th[8];
		long r[8];
		for (int i = 0; i < 8; i++)
			pthread_create(&th[i], NULL, thread_main, &r[i]);
		for (int i = 0; i < 8; i++) {
			pthread_join(th[i], NULL);
			s += r[i];
		}
	} else if (!strcmp(mode, "malloc")) {
		s = alloc_loop(1000);
	} else if (!strcmp(mode, "stress")) {
		s = path_a(argc > 2 ? atol(argv[2]) : 100000000L);
	} else if (!strcmp(mode, "control")) {
		s = control_mode();
	} else if (!strcmp(mode, "fork")) {
		s = forker();
	} else if (!strcmp(mode, "signal")) {
		s = signal_mode();
	} else if (!strcmp(mode, "refuse")) {
		s = tiny() + loops_back(3) + picked(2);
	} else {
		fprintf(stderr, "unknown mode %s\n", mode);
		return 2;
	}
	printf("probe %s %ld\n", mode, s);
	return 0;
}
