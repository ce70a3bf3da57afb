#!/bin/bash
# CATCH's subtree controls: --select F measures only inside F's activations, --filter F
# measures nothing inside them (F itself is counted in both cases).
. "$(dirname "$0")/lib.sh"
TREE="$CP_SOURCE_DIR/tests/e2e/probe-tree.py"
wl=$CP_WORKLOADS/probe.O2
run "$CALLPATH" probe -q -o "$WORK/s" -f work --select path_a -- "$wl" paths
python3 "$TREE" "$WORK/s" 'main > path_a=1' 'main > path_a > work=1000' 'path_b > work=0' \
	'path_ptr > work=0' 'work=1000' || fail "--select"
run "$CALLPATH" probe -q -o "$WORK/f" -f work --filter path_b -- "$wl" paths
python3 "$TREE" "$WORK/f" 'main > path_b=1' 'path_b > work=0' 'main > path_a > work=1000' \
	'main > path_ptr > work=500' || fail "--filter"
"$CALLPATH" probe --select '+x' -- "$wl" paths >/dev/null 2>&1 && fail "bad pattern accepted"
note "ok"
