#!/bin/bash
# callpath attach samples a running program from outside: attached twice for 2 s to
# steady.O2 (two threads, three() 75% / one() 25%), each profile has three()'s share within
# a few points of `callpath record` on the same workload; every thread is found; the
# program's output and exit status are unchanged by being attached to and detached from;
# record --mechanism kernel agrees too.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/attach-helpers/attach.sh"
require_own_sampling

start_steady 20 2 7
for i in 1 2; do
	run "$CALLPATH" attach --for 2 -o "$WORK/a$i" "$STEADY_PID"
	grep -q "sampling process $STEADY_PID (2 threads)" "$WORK/run.err" ||
		{ cat "$WORK/run.err" >&2; fail "attach $i did not find the 2 threads"; }
	ls "$WORK/a$i"/"$STEADY_PID".0.proc >/dev/null || fail "attach $i wrote no process file"
	[ "$(ls "$WORK/a$i"/*.thr | wc -l)" -eq 2 ] || fail "attach $i: not one thread file per thread"
	kill -0 "$STEADY_PID" 2>/dev/null || fail "the program did not survive attach $i"
done
end_steady 7
compare_with_record attach 2
read -r ref nref <<<"$(share_three "$WORK/r")"
# record --mechanism kernel: the same driver from the program's exec on (a dynamic program:
# its libraries come from MMAP2 records).
run "$CALLPATH" record -q --mechanism kernel -o "$WORK/k" -- "$CP_WORKLOADS/steady.O2" 2 2
grep -q "kernel stack copies" "$WORK/k"/*.proc || fail "--mechanism kernel did not sample from outside"
read -r got ngot <<<"$(share_three "$WORK/k")"
note "three(): record --mechanism kernel ${got}% of $ngot samples"
shares_close "$got" "$ngot" "$ref" "$nref" || fail "--mechanism kernel: three() has ${got}%"
note "ok"
