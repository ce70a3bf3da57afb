#!/bin/bash
# callpath probe on libc's malloc and free themselves: no recursion, no deadlock (the
# runtime's own allocations and the probe hot path never call them), exact counts.
. "$(dirname "$0")/lib.sh"
TREE="$CP_SOURCE_DIR/tests/e2e/probe-tree.py"
wl=$CP_WORKLOADS/probe.O2
want=$("$wl" malloc)
run timeout 60 "$CALLPATH" probe -q -o "$WORK/m" -f 'libc.so*:malloc' -f 'libc.so*:free' -- "$wl" malloc
grep -qx "$want" "$WORK/run.out" || fail "output changed"
# The runtime interposes malloc itself (-e alloc), so libc's malloc is called from there.
python3 "$TREE" "$WORK/m" 'alloc_loop > malloc > malloc=1000' 'alloc_loop > free=1000' ||
	fail "counts"
note "ok"
