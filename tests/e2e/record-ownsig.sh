#!/bin/bash
# A program with its own SIGPROF/SIGALRM handlers, itimers and sigprocmask: its handlers
# run, its timers fire, its mask is what it set (the workload checks itself), and it is
# still sampled. Also: the program installing a handler for OUR signal does not remove ours.
source "$(dirname "$0")/lib.sh"
CHECK="python3 $CP_SOURCE_DIR/tests/e2e/record-check.py"
prog=$CP_WORKLOADS/ownsig.O2
require_built "$prog"
"$CALLPATH" record -q -o "$WORK/m" -- "$prog" >"$WORK/out" 2>"$WORK/err" ||
	fail "exit status $?: $(cat "$WORK/out" "$WORK/err")"
grep -q "ownsig prof=ok alrm=ok mask=ok" "$WORK/out" || fail "program's signals broken: $(cat "$WORK/out")"
$CHECK "$WORK/m" >"$WORK/m.json" || fail "measurement invalid"
json_assert "$WORK/m.json" 'd["threads"][0]["samples"][0] > 100' "still sampled"

# A program that takes over our sampling signal (SIGRTMIN+6 = 40 on glibc) and blocks it.
cat >"$WORK/steal.c" <<'C'
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
static volatile sig_atomic_t got;
static void on_sig(int s) { got++; }
int main(void) {
	int sig = SIGRTMIN + 6;
	struct sigaction sa, old;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_sig;
	sigaction(sig, &sa, NULL);
	sigset_t set, now;
	sigemptyset(&set);
	sigaddset(&set, sig);
	sigprocmask(SIG_BLOCK, &set, NULL);
	sigprocmask(SIG_SETMASK, NULL, &now);
	int blocked_seen = sigismember(&now, sig);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	volatile unsigned long x = 0;
	for (unsigned long i = 0; i < 400000000ul; i++) x += i;
	kill(getpid(), sig); /* the program's own use of the signal still reaches its handler */
	sigaction(sig, NULL, &old);
	printf("steal handler=%s got=%d blocked_seen=%d\n",
	       old.sa_handler == on_sig ? "ok" : "BAD", (int)got, blocked_seen);
	return 0;
}
C
cc -O1 -o "$WORK/steal" "$WORK/steal.c" || fail "cannot compile helper"
"$CALLPATH" record -q -o "$WORK/s" -- "$WORK/steal" >"$WORK/out" 2>"$WORK/err" || fail "steal: exit $?"
grep -q "steal handler=ok got=1 blocked_seen=1" "$WORK/out" || fail "steal: $(cat "$WORK/out")"
$CHECK "$WORK/s" >"$WORK/s.json" || fail "steal measurement invalid"
json_assert "$WORK/s.json" 'd["threads"][0]["samples"][0] > 50' "sampled although the program took our signal"
exit 0
