#!/bin/bash
# Per-sample cost of perf_event overflow sampling (-e cpu-clock, task-clock, page-faults:
# sample/perf-event.c, which reads the event's group in the handler) against cputime (its
# own task-clock event, weight = period, no read), with the runtime preloaded directly:
#   handler  handler-time.so around the sampling signal handler (TSC, trimmed mean per
#            sample; see bench/overhead/handler-time.c)
#   gaps     bench/overhead/gaps.c at stack depth 40 for 1 s: per-sample interruption cost,
#            kernel included (timer, signal delivery, handler, sigreturn), base subtracted
#   faults   touch (tests/workloads/touch.c) 256 MB with page-faults@1: handler time per
#            page-fault sample
#   read     read-cost.c: one group read() and a trivial system call, outside any handler
# The gaps column needs a quiet machine: on a loaded one, descheduling dominates it.
# usage: bench/perf-events/run.sh [BUILD_DIR] (default <repo>/build); prints a table.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
build=${1:-$repo/build}
rt=$build/libcallpath-rt.so
out=$(mktemp -d /tmp/cp-bench-perf-events.XXXXXX)
trap 'rm -rf "$out"' EXIT
sh "$repo/bench/overhead/build.sh" "$out/bin" >/dev/null
gcc -O2 -g -I"$repo/tests/workloads" -o "$out/bin/touch" "$repo/tests/workloads/touch.c"
gcc -O2 -o "$out/bin/read-cost" "$here/read-cost.c"
ht=$out/bin/handler-time.so
runs=${RUNS:-5}

field() { sed -n "s/.* $1=\([0-9.]*\).*/\1/p"; }

gaps_ns_per_s() { # gaps line -> gap ns per second of spin (small gaps only)
	python3 -c "import sys,re; d=dict(re.findall(r'(\w+)=([0-9.]+)', sys.stdin.read())); print(float(d['sum_ns'])/float(d['spin_s']))"
}

base=0
for i in $(seq "$runs"); do
	v=$("$out/bin/gaps" 40 1 | gaps_ns_per_s)
	base=$(python3 -c "print($base + $v / $runs)")
done
printf "%-16s %10s %12s %14s %10s\n" event samples/s handler_ns gap_ns/sample runs
for ev in cputime@1ms cpu-clock@1ms task-clock@1ms cpu-clock@f1000; do
	hsum=0 gsum=0 ssum=0
	for i in $(seq "$runs"); do
		d=$out/m.$i
		rm -rf "$d"
		line=$(LD_PRELOAD="$rt $ht" HT_OUT="$out/ht" HT_SIGNAL=40 CALLPATH_OUTPUT=$d \
			CALLPATH_EVENTS=$ev "$out/bin/gaps" 40 1 | grep '^gaps')
		g=$(echo "$line" | gaps_ns_per_s)
		h=$(tail -1 "$out/ht" | field trimmed_mean_ns)
		n=$(tail -1 "$out/ht" | field samples)
		spin=$(echo "$line" | field spin_s)
		hsum=$(python3 -c "print($hsum + $h)")
		gsum=$(python3 -c "print($gsum + ($g - $base) * $spin / max($n, 1))")
		ssum=$(python3 -c "print($ssum + $n / $spin)")
	done
	python3 -c "print(f'%-16s %10.0f %12.0f %14.0f %10d' % ('$ev', $ssum / $runs, $hsum / $runs, $gsum / $runs, $runs))"
done
# Page faults: one sample per fault of touch (2 x 256 MB = 131072 faults).
hsum=0
for i in $(seq "$runs"); do
	rm -rf "$out/pf"
	LD_PRELOAD="$rt $ht" HT_OUT="$out/htpf" HT_SIGNAL=40 CALLPATH_OUTPUT=$out/pf \
		CALLPATH_EVENTS=page-faults@1 "$out/bin/touch" 256 >/dev/null
	h=$(tail -1 "$out/htpf" | field trimmed_mean_ns)
	hsum=$(python3 -c "print($hsum + $h)")
	n=$(tail -1 "$out/htpf" | field samples)
done
python3 -c "print(f'%-16s %10s %12.0f %14s %10d   (%d samples per run)' % ('page-faults@1', '-', $hsum / $runs, '-', $runs, $n))"
"$out/bin/read-cost"
