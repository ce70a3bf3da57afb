#!/bin/bash
# Per-call cost of the synchronous triggers (issue 5): bench.c measures ns per malloc+free
# pair, read(1 byte of /dev/zero), write(1 byte to /dev/null) and uncontended mutex
# lock+unlock (best of 5 inner repetitions, thread CPU time), at two stack depths and
# with frame pointers, under five set-ups run
# interleaved round by round (load drift on a shared VM hits them alike):
#   base   the program alone
#   off    under callpath with every trigger family off (-e cputime@1s: the runtime is
#          preloaded, in its build without any family's wrappers, src/runtime/CMakeLists.txt)
#   alloc  -e alloc (+ cputime@1s)   io  -e io   wait  -e wait
#   before as off, under another build of callpath (CALLPATH_BEFORE=path/to/callpath): what
#          a change did to the cost of the wrappers with every family off
# Prints the median of the rounds per set-up and the added ns per call against base.
# Usage: bench/triggers/run.sh [-r ROUNDS] [-n ITERATIONS] [-s "SET-UPS"]
#        (CALLPATH=path/to/callpath; default set-ups: all but before, plus before when
#        CALLPATH_BEFORE is set)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
CALLPATH=${CALLPATH:-$here/../../build/callpath}
CALLPATH_BEFORE=${CALLPATH_BEFORE:-}
rounds=5 iters=1000000
setups="base off alloc io wait${CALLPATH_BEFORE:+ before}"
while getopts r:n:s: o; do
	case $o in
	r) rounds=$OPTARG ;;
	n) iters=$OPTARG ;;
	s) setups=$OPTARG ;;
	*) exit 2 ;;
	esac
done
case " $setups " in *" base "*) ;; *) setups="base $setups" ;; esac
work=$(mktemp -d /tmp/cp-bench-triggers.XXXXXX)
trap 'rm -rf "$work"' EXIT
cc -O2 -g -o "$work/bench" "$here/bench.c" -lpthread
cc -O2 -g -fno-omit-frame-pointer -o "$work/bench.fp" "$here/bench.c" -lpthread
for r in $(seq "$rounds"); do
	for variant in "bench 0" "bench 20" "bench.fp 0"; do
		set -- $variant
		bin=$work/$1 depth=$2
		for s in $setups; do
			case $s in
			base) cmd=("$bin" "$iters" "$depth") ;;
			off) cmd=("$CALLPATH" record -q -e cputime@1s -o "$work/m" -- "$bin" "$iters" "$depth") ;;
			before) cmd=("$CALLPATH_BEFORE" record -q -e cputime@1s -o "$work/m" -- "$bin" "$iters" "$depth") ;;
			*) cmd=("$CALLPATH" record -q -e "$s" -e cputime@1s -o "$work/m" -- "$bin" "$iters" "$depth") ;;
			esac
			rm -rf "$work/m"
			echo "$s $1:$depth $("${cmd[@]}")" >>"$work/results"
		done
	done
done
python3 - "$work/results" "$setups" <<'PY'
import re, statistics, sys
rows = {}
for line in open(sys.argv[1]):
    s, depth, rest = line.split(" ", 2)
    vals = [float(x) for x in re.findall(r"([0-9.]+) ns", rest)]
    rows.setdefault((s, depth), []).append(vals)
ops = ["malloc+free", "read", "write", "mutex lock+unlock"]
titles = {"bench:0": "-O2, no frame pointers, stack depth 0 (7 program frames + the runtime's 3)",
          "bench:20": "-O2, no frame pointers, stack depth 20 (27 program frames)",
          "bench.fp:0": "-O2 -fno-omit-frame-pointer (rbp-based CFAs), stack depth 0"}
for depth in titles:
    print(f"\n{titles[depth]}")
    print(f"{'set-up':8}" + "".join(f"{o:>22}" for o in ops))
    base = [statistics.median(v[i] for v in rows[("base", depth)]) for i in range(4)]
    for s in sys.argv[2].split():
        med = [statistics.median(v[i] for v in rows[(s, depth)]) for i in range(4)]
        cells = "".join(f"{m:>10.1f} ns ({m - b:+6.1f})" for m, b in zip(med, base))
        print(f"{s:8}{cells}")
PY
