#!/bin/bash
# The sampling handler never allocates. A shim preloaded after the runtime wraps
# malloc/calloc/realloc/free and counts calls made while the sampling signal is blocked
# in the calling thread, which the kernel does exactly while our handler runs (it is
# installed without SA_NODEFER). The shim reads the real mask with a raw system call.
# A control run proves the shim detects allocation in that state.
source "$(dirname "$0")/lib.sh"
require_tool cc
cat >"$WORK/shim.c" <<'C'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
static unsigned long bad;
static int sig;
static void *(*real_malloc)(size_t);
static void *(*real_calloc)(size_t, size_t);
static void *(*real_realloc)(void *, size_t);
static void (*real_free)(void *);
static void check(void)
{
	unsigned long mask = 0;
	if (!sig)
		return;
	syscall(SYS_rt_sigprocmask, SIG_BLOCK, NULL, &mask, 8);
	if (mask & (1ul << (sig - 1)))
		__atomic_add_fetch(&bad, 1, __ATOMIC_RELAXED);
}
/* dlsym may itself call calloc: serve that from a static buffer. */
static char early[4096];
static size_t early_used;
static void *early_alloc(size_t n)
{
	void *p = early + early_used;
	early_used += (n + 15) & ~15ul;
	return early_used <= sizeof early ? p : NULL;
}
void *malloc(size_t n)
{
	if (!real_malloc)
		real_malloc = dlsym(RTLD_NEXT, "malloc");
	check();
	return real_malloc(n);
}
void *calloc(size_t a, size_t b)
{
	if (!real_calloc) {
		static int resolving;
		if (resolving)
			return early_alloc(a * b);
		resolving = 1;
		real_calloc = dlsym(RTLD_NEXT, "calloc");
	}
	check();
	return real_calloc(a, b);
}
void *realloc(void *p, size_t n)
{
	if (!real_realloc)
		real_realloc = dlsym(RTLD_NEXT, "realloc");
	check();
	return real_realloc(p, n);
}
void free(void *p)
{
	if ((char *)p >= early && (char *)p < early + sizeof early)
		return;
	if (!real_free)
		real_free = dlsym(RTLD_NEXT, "free");
	check();
	real_free(p);
}
__attribute__((constructor)) static void shim_init(void)
{
	const char *s = getenv("SHIM_SIGNAL");
	sig = s ? atoi(s) : SIGRTMIN + 6;
}
__attribute__((destructor)) static void shim_report(void)
{
	char msg[64] = "shim: allocations while sampling: ";
	char num[24];
	int n = 0;
	unsigned long v = bad;
	do num[n++] = (char)('0' + v % 10); while ((v /= 10));
	size_t l = strlen(msg);
	while (n) msg[l++] = num[--n];
	msg[l++] = '\n';
	(void)!write(2, msg, l);
}
C
cat >"$WORK/alloc.c" <<'C'
/* Allocates constantly from several threads (samples land inside malloc), forks and
 * dlopens; with CONTROL set, allocates with the sampling signal blocked (shim must see it). */
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
static void *churn(void *arg)
{
	volatile unsigned long sink = 0;
	for (long i = 0; i < 3000000; i++) {
		char *p = malloc((size_t)(i % 512) + 1);
		p[0] = (char)i;
		sink += (unsigned char)p[0];
		free(p);
	}
	return NULL;
}
int main(void)
{
	if (getenv("CONTROL")) {
		unsigned long set = 1ul << (SIGRTMIN + 6 - 1);
		syscall(SYS_rt_sigprocmask, SIG_BLOCK, &set, NULL, 8);
		char *volatile p = malloc(10);
		free(p);
		syscall(SYS_rt_sigprocmask, SIG_UNBLOCK, &set, NULL, 8);
		return 0;
	}
	pthread_t t[3];
	for (int i = 0; i < 3; i++)
		pthread_create(&t[i], NULL, churn, NULL);
	churn(NULL);
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	void *h = dlopen("libm.so.6", RTLD_NOW);
	if (h)
		dlclose(h);
	pid_t pid = fork();
	if (pid == 0) {
		churn(NULL);
		_exit(0);
	}
	waitpid(pid, NULL, 0);
	return 0;
}
C
cc -O1 -shared -fPIC -o "$WORK/shim.so" "$WORK/shim.c" -ldl || fail "cannot build the shim"
cc -O1 -o "$WORK/alloc" "$WORK/alloc.c" -lpthread -ldl || fail "cannot build the workload"
export LD_PRELOAD=$WORK/shim.so
# Control: the shim must catch an allocation made with the signal blocked.
CONTROL=1 "$WORK/alloc" 2>"$WORK/ctl" || fail "control run failed"
grep -q "while sampling: [1-9]" "$WORK/ctl" || fail "shim does not detect allocation: $(cat "$WORK/ctl")"
# The real run: callpath prepends the runtime to LD_PRELOAD, so the shim wraps libc below it.
"$CALLPATH" record -q -e cputime@200us -e realtime@500us -o "$WORK/m" -- "$WORK/alloc" \
	2>"$WORK/err" || fail "record failed: $(cat "$WORK/err")"
n=$(grep -c "while sampling: 0$" "$WORK/err")
total=$(grep -c "while sampling:" "$WORK/err")
[ "$total" -ge 2 ] || fail "shim did not report for parent and fork child: $(cat "$WORK/err")"
[ "$n" = "$total" ] || fail "the runtime allocated while sampling: $(cat "$WORK/err")"
python3 "$CP_SOURCE_DIR/tests/e2e/record-check.py" "$WORK/m" >"$WORK/m.json" || fail "invalid files"
json_assert "$WORK/m.json" 'sum(t["samples"][0] for t in d["threads"]) > 500' "samples were taken"
exit 0
