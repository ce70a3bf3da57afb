#!/bin/bash
# No deadlock and no crash when samples land inside malloc, dlopen/dlclose, fork and
# thread creation, all running concurrently at a high sampling rate (10 kHz CPU time plus
# 5 kHz wall clock). The run must finish (timeout 120 s) with the program's own result.
source "$(dirname "$0")/lib.sh"
require_tool cc
require_tool timeout
cat >"$WORK/stress.c" <<'C'
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
static volatile int stop;
static void *dl_loop(void *arg)
{
	long n = 0;
	while (!stop) {
		void *h = dlopen((const char *)arg, RTLD_NOW | RTLD_LOCAL);
		if (h) {
			dlclose(h);
			n++;
		}
	}
	return (void *)n;
}
static void *malloc_loop(void *arg)
{
	long n = 0;
	while (!stop) {
		void *p[64];
		for (int i = 0; i < 64; i++)
			p[i] = malloc((size_t)(i * 37 % 4000) + 1);
		for (int i = 0; i < 64; i++)
			free(p[i]);
		n++;
	}
	return (void *)n;
}
static void *short_thread(void *arg)
{
	return malloc(100);
}
int main(int argc, char **argv)
{
	pthread_t dl, ma;
	pthread_create(&dl, NULL, dl_loop, argv[1]);
	pthread_create(&ma, NULL, malloc_loop, NULL);
	int forks = 0, threads = 0;
	for (int round = 0; round < 60; round++) {
		pid_t pid = fork();
		if (pid == 0) {
			/* No dlopen here: glibc itself can deadlock in a fork child's dlopen when
			 * another thread was inside dlopen at fork time (seen without callpath). */
			void *volatile p = malloc(1000);
			free(p);
			_exit(0);
		}
		int st;
		waitpid(pid, &st, 0);
		forks += WIFEXITED(st) && WEXITSTATUS(st) == 0;
		pthread_t t;
		void *r;
		if (!pthread_create(&t, NULL, short_thread, NULL)) {
			pthread_join(t, &r);
			free(r);
			threads++;
		}
		usleep(5000);
	}
	stop = 1;
	void *a, *b;
	pthread_join(dl, &a);
	pthread_join(ma, &b);
	printf("stress forks=%d threads=%d dl=%s malloc=%s\n", forks, threads,
	       (long)a > 0 ? "ok" : "BAD", (long)b > 0 ? "ok" : "BAD");
	return forks == 60 && threads == 60 ? 0 : 1;
}
C
cc -O1 -o "$WORK/stress" "$WORK/stress.c" -lpthread -ldl || fail "cannot compile the workload"
lib=$(ls /lib/x86_64-linux-gnu/libm.so.6 /usr/lib/x86_64-linux-gnu/libm.so.6 2>/dev/null | head -1)
[ -n "$lib" ] || skip "no libm.so.6 to dlopen"
timeout -s KILL 120 "$CALLPATH" record -q -e cputime@100us -e realtime@200us -o "$WORK/m" -- \
	"$WORK/stress" "$lib" >"$WORK/out" 2>"$WORK/err"
rc=$?
[ $rc = 137 ] && fail "hung (killed after 120 s): deadlock?"
[ $rc = 0 ] || fail "exit status $rc: $(cat "$WORK/out" "$WORK/err")"
grep -q "stress forks=60 threads=60 dl=ok malloc=ok" "$WORK/out" || fail "program result: $(cat "$WORK/out")"
python3 "$CP_SOURCE_DIR/tests/e2e/record-check.py" "$WORK/m" >"$WORK/m.json" || fail "invalid files"
json_assert "$WORK/m.json" 'len(d["procs"]) == 61' "a process file per fork child"
json_assert "$WORK/m.json" 'all(p["flags"] & 1 for p in d["procs"])' "all processes finished"
json_assert "$WORK/m.json" 'sum(t["samples"][0] for t in d["threads"]) > 1000' "samples taken"
exit 0
