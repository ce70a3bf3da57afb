#!/bin/bash
# callpath probe on a function that longjmps out of itself 100 times: every call counted,
# the shadow stack recovers (later probed calls are counted in the right context), the
# program's output is unchanged.
. "$(dirname "$0")/lib.sh"
TREE="$CP_SOURCE_DIR/tests/e2e/probe-tree.py"
for v in O2 O0; do
	wl=$CP_WORKLOADS/probe.$v
	run "$CALLPATH" probe -q -o "$WORK/m$v" -f jumper -f work -- "$wl" longjmp
	grep -qx "probe longjmp 5020" "$WORK/run.out" || fail "$v: output changed"
	python3 "$TREE" "$WORK/m$v" 'main > jumper=100' 'main > work=7' || fail "$v: counts"
done
note "ok"
