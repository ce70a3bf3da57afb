#!/bin/bash
# The runtime's thread-scan timer (every 100 ms of process CPU, delivered to the first
# thread) must not shorten the program's sleeps: main sleeps 1 s in nanosleep and in
# sleep() while a worker burns CPU; both sleeps last their full time.
source "$(dirname "$0")/lib.sh"
require_tool cc
cat >"$WORK/ss.c" <<'C'
#include <pthread.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>
static volatile int stop;
static volatile unsigned long sink;
static void *spin(void *a) { (void)a; while (!stop) sink++; return NULL; }
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec / 1e9; }
int main(void)
{
	pthread_t th;
	pthread_create(&th, NULL, spin, NULL);
	struct timespec one = {1, 0}, rem;
	double t0 = now();
	int rc = nanosleep(&one, &rem);
	double t1 = now();
	unsigned left = sleep(1);
	double t2 = now();
	stop = 1;
	pthread_join(th, NULL);
	printf("nanosleep rc %d %.3f s; sleep left %u %.3f s\n", rc, t1 - t0, left, t2 - t1);
	return 0;
}
C
cc -O1 -pthread -o "$WORK/ss" "$WORK/ss.c" || fail "cannot compile helper"
run "$CALLPATH" record -q -o "$WORK/m" -- "$WORK/ss"
cat "$WORK/run.out"
python3 - "$WORK/run.out" <<'PY' || fail "a sleep was cut short by the runtime's signals"
import re, sys
m = re.search(r"nanosleep rc (-?\d+) ([\d.]+) s; sleep left (\d+) ([\d.]+) s", open(sys.argv[1]).read())
assert m, "no output"
rc, t1, left, t2 = int(m[1]), float(m[2]), int(m[3]), float(m[4])
assert rc == 0 and left == 0, (rc, left)
assert t1 >= 0.999 and t2 >= 0.999, (t1, t2)
PY
exit 0
