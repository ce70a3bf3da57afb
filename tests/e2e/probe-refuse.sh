#!/bin/bash
# Functions that cannot be patched safely are refused with their reason (a note in the
# measurement), never patched: too short, a jump back into the first 5 bytes, an IFUNC.
# The program runs unchanged. (PLT stubs, non-executable sections and undecodable or
# unrelocatable prologues: unit/patch/test-patch.)
. "$(dirname "$0")/lib.sh"
wl=$CP_WORKLOADS/probe.O2
run "$CALLPATH" probe -o "$WORK/m" -f tiny -f loops_back -f picked -f work -- "$wl" refuse
grep -qx "probe refuse 10" "$WORK/run.out" || fail "output changed"
strings "$WORK"/m/*.proc >"$WORK/notes"
grep -q "probe tiny in .* not installed: too short" "$WORK/notes" || fail "tiny not refused"
grep -q "probe loops_back in .* not installed: a branch in the function jumps into" "$WORK/notes" ||
	fail "loops_back not refused"
grep -q "probe picked in .* not installed: IFUNC" "$WORK/notes" || fail "IFUNC not refused"
# work is called through the IFUNC: still probed.
python3 "$CP_SOURCE_DIR/tests/e2e/probe-tree.py" "$WORK/m" 'main > work=1' || fail "work"
note "ok"
