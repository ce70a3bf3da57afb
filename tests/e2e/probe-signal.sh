#!/bin/bash
# callpath probe with a probed function called from a signal handler running on an
# alternate stack, raised from inside a probed function: the shadow stack keeps the
# interrupted activation (another stack), every call is counted, output unchanged.
. "$(dirname "$0")/lib.sh"
TREE="$CP_SOURCE_DIR/tests/e2e/probe-tree.py"
wl=$CP_WORKLOADS/probe.O2
want=$("$wl" signal)
run "$CALLPATH" probe -q -o "$WORK/m" -f work -f sig_loop -- "$wl" signal
grep -qx "$want" "$WORK/run.out" || fail "output changed: $(cat "$WORK/run.out")"
python3 "$TREE" "$WORK/m" 'main > sig_loop=1' 'main > sig_loop > work=100' 'on_usr1 > work=100' ||
	fail "counts"
note "ok"
