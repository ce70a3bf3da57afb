#!/bin/bash
# Cost per probed call in deep recursion (bench/RESULTS.md, "Probes in deep recursion").
# usage: bench/probe/deep.sh BUILD_DIR [DEPTH] [ROUNDS] [REPEATS]
# ROUNDS recursions DEPTH deep under `callpath probe -f descend`; figure = wall ns per call
# of the probed run less the plain run's, the median of REPEATS interleaved pairs. Few
# rounds show the first descent's cost (each new depth is a new calling context).
set -eu
B=${1:?build dir} DEPTH=${2:-2000} ROUNDS=${3:-10} REPEATS=${4:-5}
W=$(mktemp -d /tmp/cp-bench-deep.XXXXXX)
trap 'rm -rf "$W"' EXIT
cc -O2 -o "$W/deep" "$(dirname "$0")/deep.c"
CALLS=$(((DEPTH + 1) * ROUNDS))
diffs=""
for _ in $(seq "$REPEATS"); do
	plain=$("$W/deep" "$DEPTH" "$CALLS")
	probed=$("$B/callpath" probe -q -o "$W/m" -f descend -- "$W/deep" "$DEPTH" "$CALLS")
	rm -rf "$W/m"
	diffs+=" $(awk -v a="$probed" -v b="$plain" 'BEGIN {print a - b}')"
done
median=$(echo "$diffs" | tr ' ' '\n' | grep . | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
echo "depth $DEPTH, $ROUNDS rounds: $median ns per probed call (median of$diffs)"
