#!/bin/bash
# callpath probe --list: the matching functions of the program and its libraries, offline,
# with the runtime's refusal reasons; the program does not run.
. "$(dirname "$0")/lib.sh"
wl=$CP_WORKLOADS/probe.O2
"$CALLPATH" probe --list -f tiny -f loops_back -f picked -f work -f helper -f 'libc.so*:malloc' \
	-- "$wl" paths >"$WORK/out" 2>"$WORK/err" || fail "--list failed: $(cat "$WORK/err")"
grep -q "^probe paths" "$WORK/out" && fail "the program ran"
expect() { grep -qP "$1" "$WORK/out" || { cat "$WORK/out" >&2; fail "missing: $1"; }; }
expect '^probe\.O2\twork\t0x[0-9a-f]+\t\d+\tprobe\t-$'
expect '^probe\.O2\thelper\t.*\tprobe\t-$'
expect '^lib-probe\.so\thelper\t.*\tprobe\t-$'
expect '^libc\.so\.6\tmalloc\t.*\tprobe\t-$'
expect '^probe\.O2\ttiny\t.*\trefused: too short'
expect '^probe\.O2\tloops_back\t.*\trefused: a branch in the function jumps into'
expect '^probe\.O2\tpicked\t.*\trefused: IFUNC'
grep -q "7 function(s) match, 3 refused" "$WORK/err" || fail "summary: $(cat "$WORK/err")"
# Nothing matches: exit 1, not a crash.
"$CALLPATH" probe --list -f no_such_function_xyz "$wl" >/dev/null 2>&1 && fail "no match should fail"
"$CALLPATH" probe --list -f work /nonexistent >/dev/null 2>&1 && fail "missing program should fail"
note "ok"
