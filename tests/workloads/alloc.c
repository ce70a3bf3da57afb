/* Allocation workload with known bytes per calling context (tests/e2e/record-alloc.sh):
 *   main -> path_a -> alloc_block: 10 MiB in 10240 malloc(1024), all freed
 *   worker thread -> path_b -> alloc_block: 30 MiB in 30720 calloc(1, 1024), all freed
 *   main -> path_c -> alloc_block: 1 MiB in 256 malloc(4096), never freed (leaked)
 *   main -> path_d: realloc growing one block 4 KiB -> 64 KiB in 4 KiB steps (16 calls,
 *        557056 bytes asked in total), then freed
 *   main -> path_f -> helper_g -> alloc_block, main -> path_h -> helper_g -> alloc_block,
 *        alternating 1000 times each, 100 and 300 bytes: the same call sites at the same
 *        stack addresses under two callers (a context cache keyed by call site and stack
 *        pointer alone would mix them up)
 *   fork child -> path_e: 2 MiB in 512 malloc(4096), 16 of them (64 KiB) leaked; the
 *        parent's leaked blocks are live in the child too, but are not the child's leaks
 * Every block is written through a volatile pointer so no allocation is optimised away. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void *volatile sink;
static void *leaked[256];

__attribute__((noinline)) static void *alloc_block(size_t n, int zeroed)
{
	void *p = zeroed ? calloc(1, n) : malloc(n);
	((volatile char *)p)[0] = 1;
	sink = p;
	return p;
}

__attribute__((noinline)) static void path_a(void)
{
	for (int i = 0; i < 10240; i++)
		free(alloc_block(1024, 0));
}

__attribute__((noinline)) static void path_b(void)
{
	for (int i = 0; i < 30720; i++)
		free(alloc_block(1024, 1));
}

__attribute__((noinline)) static void path_c(void)
{
	for (int i = 0; i < 256; i++)
		leaked[i] = alloc_block(4096, 0);
}

__attribute__((noinline)) static void path_d(void)
{
	void *p = NULL;
	for (size_t n = 4096; n <= 65536; n += 4096) {
		p = realloc(p, n);
		((volatile char *)p)[n - 1] = 1;
	}
	sink = p;
	free(p);
}

__attribute__((noinline)) static void path_e(void)
{
	for (int i = 0; i < 512; i++) {
		void *p = alloc_block(4096, 0);
		if (i >= 16)
			free(p);
	}
}

static volatile int calls;

__attribute__((noinline)) static void helper_g(size_t n)
{
	free(alloc_block(n, 0));
	calls++;
}

__attribute__((noinline)) static void path_f(void)
{
	helper_g(100);
	calls++; /* no tail call: path_f stays on the stack */
}

__attribute__((noinline)) static void path_h(void)
{
	helper_g(300);
	calls++;
}

static void *worker(void *arg)
{
	(void)arg;
	path_b();
	return NULL;
}

int main(void)
{
	pthread_t t;
	if (pthread_create(&t, NULL, worker, NULL))
		return 1;
	path_a();
	path_c();
	path_d();
	for (int i = 0; i < 1000; i++) {
		path_f();
		path_h();
	}
	pthread_join(t, NULL);
	sink = leaked;
	pid_t pid = fork();
	if (pid == 0) {
		path_e();
		exit(0);
	}
	int status;
	if (pid < 0 || waitpid(pid, &status, 0) != pid || status != 0)
		return 1;
	return 0;
}
