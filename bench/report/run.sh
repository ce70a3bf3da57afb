#!/bin/bash
# Times `callpath report` (each view, text and JSON of every node) on a synthetic measurement
# of THREADS x NODES calling-context nodes over real functions of a real binary.
# usage: bench/report/run.sh [THREADS] [NODES_PER_THREAD] [RUNS]
set -eu
SRC=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-$SRC/build}
THREADS=${1:-64}
NODES=${2:-20000}
RUNS=${3:-5}
DIR=$(mktemp -d /tmp/cp-bench-report.XXXXXX)
trap 'rm -rf "$DIR"' EXIT
MODULE=${MODULE:-/usr/bin/python3.11}
[ -f "$MODULE" ] || MODULE=$BUILD/callpath
python3 "$SRC/bench/report/gen-synthetic.py" "$DIR" "$THREADS" "$NODES" "$MODULE"
echo "measurement: $THREADS threads x $NODES nodes over $MODULE ($(du -sh "$DIR" | cut -f1))"
echo "callpath: $BUILD/callpath ($(git -C "$SRC" rev-parse --short HEAD)); load: $(cut -d' ' -f1-3 /proc/loadavg)"
for args in "--view top-down" "--view bottom-up" "--view flat" \
	"--view top-down --format json" "--view bottom-up --format json" "--view flat --format json"; do
	times=()
	for _ in $(seq 1 "$RUNS"); do
		/usr/bin/time -f "%e %M" -o "$DIR/t" "$BUILD/callpath" report "$DIR" $args -o /dev/null
		times+=("$(cat "$DIR/t")")
	done
	printf '%s\n' "${times[@]}" | sort -n | awk -v a="$args" -v n="$RUNS" \
		'{t[NR]=$1; if ($2 > m) m = $2} END {printf "%-32s median %.2f s (min %.2f, max %.2f), max RSS %d MB\n", a, t[int((n+1)/2)], t[1], t[n], m/1024}'
done
