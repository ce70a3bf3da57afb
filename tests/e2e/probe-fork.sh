#!/bin/bash
# callpath probe across fork inside a probed function: the child (its own process file)
# counts its calls, the activation open at the fork returns normally in the parent and is
# never recorded in the child, nothing crashes.
. "$(dirname "$0")/lib.sh"
TREE="$CP_SOURCE_DIR/tests/e2e/probe-tree.py"
wl=$CP_WORKLOADS/probe.O2
run "$CALLPATH" probe -q -o "$WORK/m" -f forker -f work -- "$wl" fork
grep -qx "probe fork 12" "$WORK/run.out" || fail "output: $(cat "$WORK/run.out")"
[ "$(ls "$WORK"/m/*.proc | wc -l)" = 2 ] || fail "expected two process files"
python3 "$TREE" "$WORK/m" 'main > forker=1' 'main > forker > work=3' '<partial> > forker > work=5' ||
	fail "counts (the child's path stops at the inherited activation: partial)"
note "ok"
