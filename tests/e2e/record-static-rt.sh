#!/bin/bash
# A static program linked with libcallpath-rt.a (gcc -static, the link flags of
# docs/cmd-record.md) is recorded with the runtime inside, not from outside: `realtime`,
# which the kernel-copy driver cannot measure, has samples; both threads are measured (the
# second found by the thread scan, there being no pthread_create wrapper); three() has
# about 75% of three() + one(), as for the dynamic build; the exit status passes through.
# Probes are refused with a reason (no instruction decoder in the static runtime).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/attach-helpers/attach.sh"
require_own_sampling

S=$CP_WORKLOADS/steady.static-rt
require_built "$CALLPATH" "$S" "$CP_WORKLOADS/steady.O2"
readelf -lW "$S" | grep -q INTERP && fail "$S is not static"

"$CALLPATH" record -e cputime -e realtime -o "$WORK/s" -- "$S" 2 2 "$WORK/ready" 3 \
	>"$WORK/out" 2>"$WORK/err"
status=$?
[ "$status" -eq 3 ] || { cat "$WORK/err" >&2; fail "record exited $status, not the program's 3"; }
grep -q "sampling it from outside" "$WORK/err" && fail "the linked-in runtime was not used"
grep -q "steady done" "$WORK/out" || fail "the program's output is missing"
grep -Eq "metric realtime \(ns\): [1-9][0-9]* samples" "$WORK/err" ||
	{ cat "$WORK/err" >&2; fail "no realtime samples: the runtime inside did not measure"; }
grep -q "threads: 2 " "$WORK/err" || { cat "$WORK/err" >&2; fail "not both threads measured"; }
read -r got ngot <<<"$(share_three "$WORK/s")"
note "three(): ${got}% of $ngot samples"
shares_close "$got" "$ngot" 75 1000000 || fail "three() has ${got}%, about 75% expected"

"$CALLPATH" probe -f three -o "$WORK/p" -- "$S" 1 1 >"$WORK/out" 2>"$WORK/err"
status=$?
[ "$status" -eq 0 ] || { cat "$WORK/err" >&2; fail "probe on the static program exited $status"; }
grep -q "probe three in .* not installed" "$WORK/err" ||
	{ cat "$WORK/err" >&2; fail "the refused probe was not explained"; }
note "ok"
