#!/bin/bash
# The summary of a probe-only run says what was measured: how many functions were probed
# and refused (with the reasons as notes), the calls and the time in the probed functions
# (totals checked against the measurement files read by probe-tree.py), and no sampling
# statistics; its messages are `callpath probe:`'s.
. "$(dirname "$0")/lib.sh"
wl=$CP_WORKLOADS/probe.O2
run "$CALLPATH" probe -o "$WORK/m" -f work -f path_a -f tiny -- "$wl" paths
err=$WORK/run.err
grep -q "^callpath probe: measurement in $WORK/m" "$err" || fail "no 'callpath probe:' message"
grep -q "^callpath record:" "$err" && fail "messages prefixed 'callpath record:'"
grep -qx "probes: *2 functions probed, 1 refused (the notes say why)" "$err" || {
	cat "$err" >&2
	fail "no probes: line with 2 probed, 1 refused"
}
grep -q "^note: probe tiny in .* not installed: too short" "$err" || fail "no reason for tiny"
grep -q "unknown mechanism" "$err" && fail "probe metrics shown as samples of an unknown mechanism"
grep -q "^unwind:" "$err" && fail "unwind statistics of a run without samples"
# Totals, from the files themselves.
python3 "$CP_SOURCE_DIR/tests/e2e/probe-tree.py" "$WORK/m" >"$WORK/tree"
calls=$(awk -F'\t' '{ s += $3 } END { print s }' "$WORK/tree")
nfun=$(awk -F'\t' '{ n = split($2, p, " > "); print p[n] }' "$WORK/tree" | sort -u | wc -l)
[ "$calls" -gt 0 ] || fail "no calls in the measurement"
grep -qx "metric calls (calls): $calls calls, $nfun functions called \[entry/exit probes\]" \
	"$err" || {
	grep "^metric" "$err" >&2
	fail "calls line (want $calls calls of $nfun functions)"
}
grep -qE "^metric probe-time \(ns\): [0-9.]+ (us|ms|s) in the probed functions, $nfun functions called" \
	"$err" || fail "probe-time line"
grep "^metric probe-time" "$err" | grep -qE ': 0\.0+ ' && fail "no probe time"

# Nothing matched: the summary says so.
run "$CALLPATH" probe -o "$WORK/none" -f no_such_function_here -- "$wl" paths
grep -q "^probes: *0 functions probed, 0 refused: no function matches" "$WORK/run.err" ||
	fail "no word that nothing matched"

# With sampling too (-e), the sampling statistics stay.
run "$CALLPATH" probe -o "$WORK/both" -f work -e cputime -- "$wl" paths
grep -q "^unwind:" "$WORK/run.err" || fail "unwind line missing with -e"
grep -q "^metric cputime (ns): [0-9]* samples" "$WORK/run.err" || fail "cputime line with -e"
note "ok"
