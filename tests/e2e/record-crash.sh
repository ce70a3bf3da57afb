#!/bin/bash
# SIGSEGV: callpath exits 128+11 and reports the signal; the files are marked CRASHED and
# hold the samples. SIGKILL: files stay readable up to the last published sample.
source "$(dirname "$0")/lib.sh"
CHECK="python3 $CP_SOURCE_DIR/tests/e2e/record-check.py"
require_built "$CP_WORKLOADS/segv.O2"
"$CALLPATH" record -q -o "$WORK/m" -- "$CP_WORKLOADS/segv.O2" >/dev/null 2>"$WORK/err"
rc=$?
[ $rc = 139 ] || fail "exit status $rc, want 139 (128+SIGSEGV)"
grep -q "signal 11" "$WORK/err" || fail "signal not reported: $(cat "$WORK/err")"
$CHECK "$WORK/m" >"$WORK/m.json" || fail "measurement invalid"
json_assert "$WORK/m.json" 'd["procs"][0]["flags"] & 2 and d["procs"][0]["exit_status"] == 139' "CRASHED, status 139"
json_assert "$WORK/m.json" 'd["threads"][0]["samples"][0] > 100' "samples kept"

# abort(): 128+6, CRASHED; the program sees SIG_DFL for SIGABRT and SIGINT (our exit handlers are hidden).
cat >"$WORK/ab.c" <<'C'
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
int main(void)
{
	struct sigaction old;
	sigaction(SIGABRT, NULL, &old);
	void (*prev)(int) = signal(SIGINT, SIG_DFL);
	printf("dfl %d %d\n", old.sa_handler == SIG_DFL, prev == SIG_DFL);
	fflush(stdout);
	volatile unsigned long x = 0;
	for (unsigned long i = 0; i < 300000000ul; i++)
		x += i;
	abort();
}
C
cc -O1 -o "$WORK/ab" "$WORK/ab.c" || fail "cannot compile helper"
"$CALLPATH" record -q -o "$WORK/a" -- "$WORK/ab" >"$WORK/aout" 2>/dev/null
rc=$?
[ $rc = 134 ] || fail "abort: exit status $rc, want 134"
grep -q "dfl 1 1" "$WORK/aout" || fail "SIGABRT disposition not reported as SIG_DFL: $(cat "$WORK/aout")"
$CHECK "$WORK/a" >"$WORK/a.json" || fail "abort measurement invalid"
json_assert "$WORK/a.json" 'd["procs"][0]["flags"] & 2 and d["procs"][0]["exit_status"] == 134' "abort: CRASHED, 134"
json_assert "$WORK/a.json" 'd["threads"][0]["samples"][0] > 50 and d["threads"][0]["flags"] & 1' "abort: samples, thread finished"

# SIGKILL in the middle of a run: everything published so far is valid.
(cd "$WORK" && exec "$CALLPATH" record -q -o "$WORK/k" -- "$CP_WORKLOADS/threads.O2" 4) \
	>/dev/null 2>&1 &
cpid=$!
for i in $(seq 50); do
	sleep 0.1
	[ "$(ls "$WORK/k" 2>/dev/null | grep -c thr)" -ge 5 ] && break
done
sleep 0.3
child=$(pgrep -P $cpid | head -1)
[ -n "$child" ] || fail "could not find the program to kill"
kill -KILL "$child"
wait $cpid
rc=$?
[ $rc = 137 ] || fail "exit status $rc after SIGKILL, want 137"
$CHECK "$WORK/k" >"$WORK/k.json" || fail "files of a killed run are not readable"
json_assert "$WORK/k.json" 'not d["procs"][0]["flags"] & 1' "killed run not FINISHED"
json_assert "$WORK/k.json" 'd["procs"][0]["nthreads"] == len(d["threads"]) == 5' "thread count kept while running"
json_assert "$WORK/k.json" 'sum(t["samples"][0] for t in d["threads"]) > 50' "samples survive SIGKILL"
json_assert "$WORK/k.json" 'all(t["totals"][0] <= t["samples"][0] * 1000000 for t in d["threads"])' \
	"values consistent with counters"

# SIGTERM to callpath reaches the program; callpath reports it and exits 128+15.
(cd "$WORK" && exec "$CALLPATH" record -q -o "$WORK/t" -- "$CP_WORKLOADS/threads.O2" 4) \
	>/dev/null 2>"$WORK/terr" &
cpid=$!
for i in $(seq 50); do
	sleep 0.1
	[ "$(ls "$WORK/t" 2>/dev/null | grep -c thr)" -ge 5 ] && break
done
kill -TERM $cpid
wait $cpid
rc=$?
[ $rc = 143 ] || fail "exit status $rc after SIGTERM to callpath, want 143"
grep -q "signal 15" "$WORK/terr" || fail "SIGTERM not reported: $(cat "$WORK/terr")"
$CHECK "$WORK/t" >"$WORK/t.json" || fail "files of a terminated run are not readable"
json_assert "$WORK/t.json" 'd["procs"][0]["flags"] & 2 and d["procs"][0]["exit_status"] == 143' "SIGTERM: CRASHED, 143"
json_assert "$WORK/t.json" 'all(t["flags"] & 1 for t in d["threads"])' "SIGTERM: thread files finished"
exit 0
