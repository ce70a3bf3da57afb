#!/bin/bash
# callpath attach --inject loads the runtime into a running program (ptrace, dlopen at a
# safe point) and measures it from inside: attached for 2 s to steady.O2 (two threads,
# three() 75% / one() 25%), three()'s share is within sampling noise of `callpath record`'s
# and both threads are measured; while attached, the control channel works (probe --pid
# inserts a probe whose calls are counted); at the end the runtime goes dormant and its
# probes are removed; attaching again re-arms the loaded runtime (no second load) and
# measures again; the program's output and exit status are unchanged.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/attach-helpers/attach.sh"
require_own_sampling

start_steady 20 2 7
trap 'kill -KILL "$STEADY_PID" 2>/dev/null' EXIT
"$CALLPATH" attach --inject --for 4 -o "$WORK/a1" "$STEADY_PID" >"$WORK/a1.out" 2>"$WORK/a1.err" &
attach=$!
# The control FIFO appears once the runtime is loaded and started (0.7 s was too short at
# load 20 under ASan).
for _ in $(seq 300); do
	[ -p "$WORK/a1/$STEADY_PID.control" ] && break
	sleep 0.05
done
run "$CALLPATH" probe --pid "$STEADY_PID" --add three
grep -q "1 probed" "$WORK/run.out" "$WORK/run.err" || { cat "$WORK/run.err" >&2; fail "probe --pid on the injected runtime"; }
wait "$attach" || { cat "$WORK/a1.err" >&2; fail "attach --inject failed"; }
grep -q "runtime loaded into process $STEADY_PID (2 threads stopped" "$WORK/a1.err" ||
	{ cat "$WORK/a1.err" >&2; fail "attach 1 did not load the runtime into the 2 threads"; }
grep -q "threads: 2 " "$WORK/a1.err" || { cat "$WORK/a1.err" >&2; fail "attach 1: not 2 threads measured"; }
grep -Eq "metric calls \(calls\): [1-9][0-9]* calls" "$WORK/a1.err" ||
	{ cat "$WORK/a1.err" >&2; fail "the probe inserted through the control channel counted no call"; }
kill -0 "$STEADY_PID" 2>/dev/null || fail "the program did not survive attach 1"
[ ! -e "$WORK/a1/$STEADY_PID.control" ] || fail "the control FIFO stayed after the detach"
grep -q "libcallpath-rt.so" "/proc/$STEADY_PID/maps" || fail "the runtime is not loaded in the program"

run "$CALLPATH" attach --inject --for 2 -o "$WORK/a2" "$STEADY_PID"
grep -q "runtime re-armed in process $STEADY_PID" "$WORK/run.err" ||
	{ cat "$WORK/run.err" >&2; fail "attach 2 did not re-arm the dormant runtime"; }
grep -Eq "metric calls \(calls\): 0 calls" "$WORK/run.err" ||
	{ cat "$WORK/run.err" >&2; fail "attach 1's probe stayed in the program after its detach"; }
[ "$(ls "$WORK/a2"/*.proc | wc -l)" -eq 1 ] || fail "attach 2 wrote no process file"

trap - EXIT
end_steady 7
compare_with_record "attach --inject" 2
note "ok"
