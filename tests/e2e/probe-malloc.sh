#!/bin/bash
# callpath probe on libc's malloc and free themselves: no recursion, no deadlock (the
# runtime's own allocations and the probe hot path never call them), exact counts.
. "$(dirname "$0")/lib.sh"
TREE="$CP_SOURCE_DIR/tests/e2e/probe-tree.py"
wl=$CP_WORKLOADS/probe.O2
want=$("$wl" malloc)
run timeout 60 "$CALLPATH" probe -q -o "$WORK/m" -f 'libc.so*:malloc' -f 'libc.so*:free' -- "$wl" malloc
grep -qx "$want" "$WORK/run.out" || fail "output changed"
python3 "$TREE" "$WORK/m" 'alloc_loop > free=1000' || fail "free counts"
# libc's malloc, called by alloc_loop directly or through the runtime's own malloc wrapper
# (when the runtime interposes malloc, for -e alloc).
n=$(python3 "$TREE" "$WORK/m" | awk -F'\t' '$2 ~ /alloc_loop( > malloc)? > malloc$/ { n += $3 } END { print n + 0 }')
[ "$n" = 1000 ] || fail "expected 1000 malloc calls from alloc_loop, found $n"
note "ok"
