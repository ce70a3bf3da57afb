#!/bin/bash
# callpath probe -m cputime: a third metric, probe-cputime (exclusive thread CPU time per
# probed call path), beside calls and probe-time; on CPU-bound code it stays below the
# wall time. Unknown metrics are rejected.
. "$(dirname "$0")/lib.sh"
TREE="$CP_SOURCE_DIR/tests/e2e/probe-tree.py"
wl=$CP_WORKLOADS/probe.O2
run "$CALLPATH" probe -q -m cputime -o "$WORK/m" -f path_a -f path_b -- "$wl" paths
python3 "$TREE" "$WORK/m" 'main > path_a=1' 'main > path_b=1' || fail "counts"
PROBE_TREE_METRIC=probe-cputime python3 "$TREE" "$WORK/m" >"$WORK/cpu"
python3 "$TREE" "$WORK/m" >"$WORK/wall"
# Every context has CPU time, and no more than 1.5x its wall time plus 50 us (clock
# granularity, the system calls themselves).
paste "$WORK/cpu" "$WORK/wall" | awk -F'\t' '
	{ n++; if ($4 <= 0 || $4 > 1.5 * $8 + 50000) bad = 1 }
	END { exit (n == 2 && !bad) ? 0 : 1 }' || fail "cputime values: $(paste "$WORK/cpu" "$WORK/wall")"
"$CALLPATH" probe -m bogus -f work -- "$wl" paths >/dev/null 2>&1 && fail "unknown metric accepted"
note "ok"
