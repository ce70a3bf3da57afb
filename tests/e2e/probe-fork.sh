#!/bin/bash
# callpath probe across fork inside a probed function: the child (its own process file)
# counts its calls, the activation open at the fork returns normally in the parent and is
# never recorded in the child, nothing crashes. The child's calls inside the inherited
# activation have their full path: the stack walk passes the replaced return address
# through the shadow stack the child inherited (3 calls in the parent + 5 in the child).
. "$(dirname "$0")/lib.sh"
TREE="$CP_SOURCE_DIR/tests/e2e/probe-tree.py"
wl=$CP_WORKLOADS/probe.O2
run "$CALLPATH" probe -q -o "$WORK/m" -f forker -f work -- "$wl" fork
grep -qx "probe fork 12" "$WORK/run.out" || fail "output: $(cat "$WORK/run.out")"
[ "$(ls "$WORK"/m/*.proc | wc -l)" = 2 ] || fail "expected two process files"
python3 "$TREE" "$WORK/m" 'main > forker=1' 'main > forker > work=8' ||
	fail "counts (parent 3 + child 5 under main > forker)"
note "ok"
