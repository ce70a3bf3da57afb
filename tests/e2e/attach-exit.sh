#!/bin/bash
# A program that ends while callpath attach samples it: attach stops by itself (long before
# its --for), says so, and keeps the profile up to then; the program's output and exit
# status are its own.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/attach-helpers/attach.sh"
require_own_sampling

start_steady 2 2 5
run "$CALLPATH" attach --for 60 -o "$WORK/a" "$STEADY_PID"
grep -q "the process ended" "$WORK/run.err" || { cat "$WORK/run.err" >&2; fail "no end said"; }
wait "$STEADY_PID"
status=$?
[ "$status" -eq 5 ] || fail "the program's exit status became $status (5 expected)"
[ "$(cat "$WORK/steady.out")" = "steady done" ] || fail "the program's output changed"
read -r share n <<<"$(share_three "$WORK/a")"
note "three(): ${share}% of $n samples"
[ "$n" -gt 20 ] || fail "only $n samples kept"
shares_close "$share" "$n" 75 1000000 || fail "three() has ${share}%, not about 75%"
note "ok"
