#!/bin/bash
# attach --inject never deadlocks on the allocator's or the loader's locks: mallocbusy.O2
# has 4 threads allocating and freeing all the time (small blocks from the thread caches,
# large ones through the arenas' locks); the runtime is injected (and re-armed) repeatedly,
# each time measuring for 50 ms, up to 100 times or as many as fit in 14 s (at least 5, for
# which it goes on up to 45 s: at load 20 under ASan 4 fitted in 14 s), each bounded by a 15 s timeout (a deadlock shows as a timeout). The program's output and exit status
# are unchanged.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/attach-helpers/attach.sh"
require_own_sampling
require_built "$CALLPATH" "$CP_WORKLOADS/mallocbusy.O2"

"$CP_WORKLOADS/mallocbusy.O2" 60 4 "$WORK/ready" 5 >"$WORK/m.out" 2>&1 &
pid=$!
trap 'kill -KILL "$pid" 2>/dev/null' EXIT
for _ in $(seq 100); do [ -e "$WORK/ready" ] && break; sleep 0.1; done
[ -e "$WORK/ready" ] || fail "mallocbusy did not start"

start=$SECONDS
n=0
while [ "$n" -lt 100 ] && { [ $((SECONDS - start)) -lt 14 ] ||
	{ [ "$n" -lt 5 ] && [ $((SECONDS - start)) -lt 45 ]; }; }; do
	n=$((n + 1))
	timeout 15 "$CALLPATH" attach --inject --for 0.05 --no-analyze -o "$WORK/m" "$pid" \
		>"$WORK/out" 2>"$WORK/err"
	status=$?
	[ "$status" -ne 124 ] || fail "injection $n did not finish in 15 s (deadlock?)"
	[ "$status" -eq 0 ] || { cat "$WORK/err" >&2; fail "injection $n failed ($status)"; }
	kill -0 "$pid" 2>/dev/null || fail "the program died at injection $n"
	rm -rf "$WORK/m"
done
[ "$n" -ge 5 ] || fail "only $n injections in $((SECONDS - start)) s"
note "$n injections into 4 threads busy in malloc, none deadlocked"
kill -TERM "$pid"
wait "$pid"
status=$?
trap - EXIT
[ "$status" -eq 5 ] || fail "the program's exit status became $status (5 expected)"
[ "$(cat "$WORK/m.out")" = "mallocbusy done" ] || fail "the program's output changed: $(cat "$WORK/m.out")"
note "ok"
