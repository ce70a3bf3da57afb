#!/bin/bash
# callpath probe with 8 threads calling the probed function 10000 times each: every
# thread file holds exactly its 10000 calls under thread_main.
. "$(dirname "$0")/lib.sh"
TREE="$CP_SOURCE_DIR/tests/e2e/probe-tree.py"
wl=$CP_WORKLOADS/probe.O2
want=$("$wl" threads)
run "$CALLPATH" probe -q -o "$WORK/m" -f work -- "$wl" threads
grep -qx "$want" "$WORK/run.out" || fail "output changed"
python3 "$TREE" "$WORK/m" 'thread_main > work=80000' || fail "total"
n=$(python3 "$TREE" "$WORK/m" | awk -F'\t' '$2 ~ /thread_main > work$/ && $3 == 10000' | wc -l)
[ "$n" = 8 ] || fail "expected 8 threads with 10000 calls each, found $n"
note "ok"
