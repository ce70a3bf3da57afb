#!/bin/bash
# Out of descriptors (RLIMIT_NOFILE 64, 80 threads): the threads that cannot get a thread
# file are counted in a NOTE; the others are measured; the program is unaffected.
source "$(dirname "$0")/lib.sh"
require_tool cc
cat >"$WORK/manyt.c" <<'C'
#include <pthread.h>
#include <stdio.h>
#include <sys/resource.h>
#include <unistd.h>
static int started;
/* Every thread stays alive until all 80 exist (or 5 s passed), so the runtime needs more
 * descriptors at once than the limit allows, however the threads are scheduled. */
static void *work(void *a)
{
	volatile unsigned long x = 0;
	for (unsigned long i = 0; i < 20000000; i++)
		x += i;
	__atomic_add_fetch(&started, 1, __ATOMIC_SEQ_CST);
	for (int ms = 0; ms < 5000 && __atomic_load_n(&started, __ATOMIC_SEQ_CST) < 80; ms++)
		usleep(1000);
	return 0;
}
int main(void)
{
	struct rlimit rl = {64, 64};
	setrlimit(RLIMIT_NOFILE, &rl);
	pthread_t t[80];
	int n = 0;
	for (int i = 0; i < 80; i++)
		n += !pthread_create(&t[i], 0, work, 0);
	for (int i = 0; i < n; i++)
		pthread_join(t[i], 0);
	printf("threads %d\n", n);
	return n == 80 ? 0 : 1;
}
C
cc -O1 -o "$WORK/manyt" "$WORK/manyt.c" -lpthread || fail "cannot compile the workload"
run "$CALLPATH" record -q -o "$WORK/m" -- "$WORK/manyt"
grep -q "threads 80" "$WORK/run.out" || fail "program affected: $(cat "$WORK/run.out")"
python3 "$CP_SOURCE_DIR/tests/e2e/record-check.py" "$WORK/m" >"$WORK/m.json" || fail "invalid files"
json_assert "$WORK/m.json" 'any("could not be measured" in n for n in d["procs"][0]["notes"])' "NOTE counts unmeasured threads"
json_assert "$WORK/m.json" 'not d["procs"][0]["flags"] & 4' "runtime not disabled"
json_assert "$WORK/m.json" 'len(d["threads"]) >= 10 and sum(t["samples"][0] for t in d["threads"]) > 100' "the other threads measured"
exit 0
