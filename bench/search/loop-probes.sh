#!/usr/bin/env bash
# Loop probes (`callpath probe --pid PID --add-loops F`, issue 14's foundation of the search)
# on the planted programs' hot functions: prints, per loop, iterations, entries and
# loop-time, for comparison with what the program does (bench/search/README.md, "Loop
# probes on the planted programs"). Needs a callpath with `probe --loops` (h/search).
# Usage: bench/search/loop-probes.sh [BUILD-DIR] [SECONDS]
set -u
build=$(cd "${1:-build}" && pwd)
secs=${2:-8}
cp="$build/callpath"
bin="$build/bench/search"
work=$(mktemp -d /tmp/cp-loop-probes.XXXXXX)
trap 'rm -rf "$work"' EXIT

# name function: run the program under probe --loops, add F's loop probes after 2 s.
loops() {
	local name=$1 fn=$2 dir="$work/$1" pid
	"$cp" probe --loops -q -f main -o "$dir" -- "$bin/$name" "$secs" >"$work/$name.out" 2>&1 &
	local bg=$!
	sleep 2
	pid=$(pgrep -n -x "$name")
	echo "== $name: --add-loops $fn"
	"$cp" probe --pid "$pid" -o "$dir" --add-loops "$fn"
	wait "$bg"
	grep 'planted:' "$work/$name.out"
	"$cp" report "$dir" --metric loop-iterations,loop-entries,loop-time --format json 2>/dev/null |
		python3 -c '
import json, sys
d = json.load(sys.stdin)
for n in d["nodes"]:
    it, en, ns = n["exclusive"][-3:]
    if n["kind"] == "loop" and ns:
        print("  %-36s iterations %11d  entries %9d  time %7.3f s  (parent node %d)"
              % (n["name"], it, en, ns / 1e9, n["parent"]))'
}

loops loop3of5 simulate_step # names its GCC clone simulate_step.constprop.0 too
loops inlined relax_grid
loops nested stencil
loops dlopen "$bin/libplanted-kernel.so:kernel_apply" # a bare name searches the executable only
