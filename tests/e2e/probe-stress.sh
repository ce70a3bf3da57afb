#!/bin/bash
# 10^8 probed calls: the program finishes with the same output and every call is counted.
. "$(dirname "$0")/lib.sh"
wl=$CP_WORKLOADS/probe.O2
# sum of 3i+1 for i < 10^8 (the unprobed run's output, without spending the time)
want="probe stress $(python3 -c 'n = 10**8; print(3 * n * (n - 1) // 2 + n)')"
[ "$("$wl" stress 1000)" = "probe stress 1499500" ] || fail "workload checksum formula"
run timeout 120 "$CALLPATH" probe -q -o "$WORK/m" -f work -- "$wl" stress 100000000
grep -qx "$want" "$WORK/run.out" || fail "output changed"
python3 "$CP_SOURCE_DIR/tests/e2e/probe-tree.py" "$WORK/m" 'main > path_a > work=100000000' ||
	fail "count"
note "ok"
