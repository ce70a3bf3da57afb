#!/bin/bash
# Per-call cost of pthread_mutex_lock+unlock with and without callpath (issue 10 §2):
# bench.c (best of 5 repetitions, thread CPU time) run alone (`base`) and under
# `callpath record -e cputime` (`after`: CALLPATH, default build/callpath), and, when
# CALLPATH_BEFORE names another build, under that one too (`before`), interleaved round
# by round so that load drift on a shared VM hits the set-ups alike. Prints the median of
# the rounds per set-up and the ns added per pair against base.
# Usage: bench/interpose/run.sh [-r ROUNDS] [-n ITERATIONS]
set -eu
here=$(cd "$(dirname "$0")" && pwd)
CALLPATH=${CALLPATH:-$here/../../build/callpath}
CALLPATH_BEFORE=${CALLPATH_BEFORE:-}
rounds=11 iters=5000000
while getopts r:n: o; do
	case $o in
	r) rounds=$OPTARG ;;
	n) iters=$OPTARG ;;
	*) exit 2 ;;
	esac
done
work=$(mktemp -d /tmp/cp-bench-interpose.XXXXXX)
trap 'rm -rf "$work"' EXIT
cc -O2 -g -o "$work/bench" "$here/bench.c" -lpthread
setups="base after"
[ -n "$CALLPATH_BEFORE" ] && setups="base before after"
for r in $(seq "$rounds"); do
	for s in $setups; do
		case $s in
		base) cmd=("$work/bench" "$iters") ;;
		before) cmd=("$CALLPATH_BEFORE" record -q -e cputime -o "$work/m" -- "$work/bench" "$iters") ;;
		after) cmd=("$CALLPATH" record -q -e cputime -o "$work/m" -- "$work/bench" "$iters") ;;
		esac
		rm -rf "$work/m"
		echo "$s $("${cmd[@]}")" >>"$work/results"
	done
done
python3 - "$work/results" "$setups" <<'PY'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    s, ns, _ = line.split()
    rows.setdefault(s, []).append(float(ns))
base = statistics.median(rows["base"])
print(f"{'set-up':8}{'median ns/pair':>16}{'added':>10}{'rounds':>8}   (min..max)")
for s in sys.argv[2].split():
    m = statistics.median(rows[s])
    print(f"{s:8}{m:>16.2f}{m - base:>+10.2f}{len(rows[s]):>8}   ({min(rows[s]):.2f}..{max(rows[s]):.2f})")
PY
