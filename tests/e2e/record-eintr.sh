#!/bin/bash
# Under realtime sampling our signal interrupts blocked threads ~1000 times a second.
# Calls the kernel never restarts (ppoll, pselect, epoll_pwait(2), sigtimedwait,
# sigwaitinfo, sigsuspend, semop, semtimedop, msgrcv) must not fail with EINTR, and their
# timeouts must last as long as asked: the workload checks each and says "eintr ok".
source "$(dirname "$0")/lib.sh"
prog=$CP_WORKLOADS/eintr.O2
require_built "$prog"
# Without callpath the workload passes (it is a valid check of itself).
"$prog" 50 >"$WORK/plain.out" 2>&1 || { cat "$WORK/plain.out" >&2; fail "workload fails alone"; }
# A wait that never ends (a program signal lost with one of ours: sigsuspend) fails here
# rather than at ctest's timeout.
timeout -k 5 120 "$CALLPATH" record -q -e realtime -o "$WORK/m" -- "$prog" 150 >"$WORK/out" 2>&1
rc=$?
if [ $rc -ne 0 ]; then
	pkill -KILL -f "$prog 150" 2>/dev/null
	cat "$WORK/out" >&2
	[ $rc -eq 124 ] && fail "a blocking call never returned (hang)"
	fail "a blocking call saw our signal"
fi
grep -q "eintr ok" "$WORK/out" || { cat "$WORK/out" >&2; fail "program output missing"; }
grep "^note:" "$WORK/out" || true
exit 0
