#!/bin/bash
# Cost per call of a tiny function under callpath probe and its peers (bench/RESULTS.md).
# usage: bench/probe/run.sh BUILD_DIR [N] [ROUNDS]
# Each figure: (user+sys time of the instrumented run - the plain run) / N, the median of
# ROUNDS interleaved rounds.
set -eu
B=${1:?build dir}
N=${2:-10000000}
ROUNDS=${3:-5}
D=$(cd "$(dirname "$0")" && pwd)
W=$(mktemp -d /tmp/cp-bench-probe.XXXXXX)
trap 'rm -rf "$W"' EXIT
cc -O2 -o "$W/plain" "$D/tiny.c"
cc -O2 -finstrument-functions -o "$W/cyg" "$D/tiny.c" "$D/hooks.c"
cc -O2 -pg -o "$W/pg" "$D/tiny.c"
# uftrace -P patches only functions with a patchable entry (Debian's uftrace has no
# full dynamic patching of plain -O2 code: on $W/plain it records nothing of work).
cc -O2 -fpatchable-function-entry=5 -o "$W/pfe" "$D/tiny.c"
cpu() { # user+sys seconds of a command
	/usr/bin/time -f "%U %S" -o "$W/t" "$@" >/dev/null 2>&1 || true
	awk '{print $1 + $2}' "$W/t"
}
declare -A tot
names="plain probe probe-unprobed cyg pg uftrace-P uftrace-pg"
for r in $(seq "$ROUNDS"); do
	tot[plain]+=" $(cpu "$W/plain" "$N")"
	tot[probe]+=" $(cpu "$B/callpath" probe -q -o "$W/m" -f work -- "$W/plain" "$N")"
	tot[probe-unprobed]+=" $(cpu "$B/callpath" probe -q -o "$W/m" -f work -- "$W/plain" "$N" 1)"
	tot[cyg]+=" $(cpu "$W/cyg" "$N")"
	(cd "$W" && tot_pg=$(cpu "$W/pg" "$N") && echo "$tot_pg" >"$W/pgt")
	tot[pg]+=" $(cat "$W/pgt")"
	if command -v uftrace >/dev/null; then
		tot[uftrace-P]+=" $(cpu uftrace record -d "$W/u1" -P work "$W/pfe" "$N")"
		tot[uftrace-pg]+=" $(cpu uftrace record -d "$W/u2" "$W/pg" "$N")"
	fi
	rm -rf "$W/m" "$W/u1" "$W/u2"
done
median() { tr ' ' '\n' | grep . | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
base=$(echo "${tot[plain]}" | median)
printf "%-16s %10s %12s\n" run "cpu s" "ns/call"
for n in $names; do
	[ -n "${tot[$n]:-}" ] || continue
	m=$(echo "${tot[$n]}" | median)
	awk -v n="$n" -v m="$m" -v b="$base" -v N="$N" 'BEGIN { printf "%-16s %10.3f %12.1f\n", n, m, (m - b) * 1e9 / N }'
done
