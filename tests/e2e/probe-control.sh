#!/bin/bash
# The internal control API (callpath_probe_insert / callpath_probe_remove, exported by the
# runtime for the automated search's control channel): probes inserted and removed while
# the program runs count exactly the calls made while they were in.
. "$(dirname "$0")/lib.sh"
TREE="$CP_SOURCE_DIR/tests/e2e/probe-tree.py"
wl=$CP_WORKLOADS/probe.O2
run "$CALLPATH" probe -q -o "$WORK/m" -f no_such_function_at_start -- "$wl" control
grep -qx "control 1 1 1" "$WORK/run.out" || fail "insert/remove results: $(cat "$WORK/run.out")"
python3 "$TREE" "$WORK/m" 'control_calls > work=25' || fail "counts"
# Without probes configured the API refuses (-1) and the program runs unchanged.
run "$CALLPATH" record -q -o "$WORK/r" -- "$wl" control
grep -qx "control -1 -1 -1" "$WORK/run.out" || fail "without probes: $(cat "$WORK/run.out")"
note "ok"
