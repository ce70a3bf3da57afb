#!/bin/bash
# `callpath analyze` at scale, on synthetic measurements written by bench/analyze/gen.c with
# the format structs (frames are real addresses of libc's .text, so correlation does real
# structure lookups; libc's structure is put in the cache first and not timed):
#   1. THREADS threads sharing SAMPLES samples over CONTEXTS calling contexts of about
#      DEPTH frames (default: 64 threads, 1M samples, 50k contexts, depth 30), once with
#      samples spread evenly over the contexts (SKEW 1: the worst case, every thread's tree
#      is large) and once concentrated on hot contexts (SKEW 3, closer to real profiles);
#   2. PROCS process images of one thread each (default 10,000), analyzed under
#      `ulimit -n 64` to show that files are read one at a time;
#   3. an MPI job of RANKS ranks x RTHREADS threads (default 1024 x 4, 250 samples per
#      thread over 5,000 contexts), analyzed by `mpirun -np K callpath analyze --mpi` for
#      K in KS (default "1 2"), under `ulimit -n 64`.
# The threads cases run with `-j J` for J in JOBS (default "1 2"); CALLPATH_BASE=BINARY
# adds a run of another callpath (e.g. a build of main) before them, interleaved.
#   bench/analyze/run.sh [-B BUILD_DIR] [-w WORKDIR] [-r RUNS]
# Prints wall and CPU time (median of RUNS), peak RSS, sizes, and analyze's own phase
# figures (CALLPATH_ANALYZE_STATS).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${CP_BUILD_DIR:-$here/../../build}
work=${TMPDIR:-/tmp}/cp-bench-analyze
runs=3
THREADS=${THREADS:-64} SAMPLES=${SAMPLES:-1000000} CONTEXTS=${CONTEXTS:-50000} DEPTH=${DEPTH:-30}
PROCS=${PROCS:-10000}
RANKS=${RANKS:-1024} RTHREADS=${RTHREADS:-4} JOBS=${JOBS:-"1 2"} KS=${KS:-"1 2"}
while getopts "B:w:r:" o; do
	case $o in
	B) build=$OPTARG ;;
	w) work=$OPTARG ;;
	r) runs=$OPTARG ;;
	*) exit 2 ;;
	esac
done
callpath=$build/callpath
[ -x "$callpath" ] || { echo "no $callpath (build first)" >&2; exit 2; }
mkdir -p "$work"
cc -O2 -D_GNU_SOURCE -I"$here/../../src" "$here/gen.c" -o "$work/gen" -lm

libc=$(readlink -f /lib/x86_64-linux-gnu/libc.so.6)
bid=$(readelf -n "$libc" | awk '/Build ID/ {print $3}')
read -r lo size < <(readelf -SW "$libc" | awk '$2 == ".text" {print "0x"$4, "0x"$6}')
hi=$(printf '0x%x' $((lo + size)))
"$callpath" struct "$libc" >/dev/null # into the cache, not timed

median() { sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

# measure NAME DIR [ulimit -n] [analyze's command line...]: runs analyze RUNS times
measure() {
	local name=$1 dir=$2 nofile=${3:-}
	shift 3 || shift $#
	[ $# -gt 0 ] || set -- "$callpath" analyze
	local out=$work/$name.times
	: >"$out"
	for ((i = 0; i < runs; i++)); do
		rm -f "$work/$name.db"
		(
			[ -z "$nofile" ] || ulimit -n "$nofile"
			CALLPATH_ANALYZE_STATS=1 /usr/bin/time -f 'WALL %e CPU %U %S RSS %M' \
				"$@" -o "$work/$name.db" "$dir"
		) >>"$out" 2>&1
	done
	local wall cpu rss
	wall=$(grep -o 'WALL [0-9.]*' "$out" | awk '{print $2}' | median)
	cpu=$(grep -o 'CPU [0-9.]* [0-9.]*' "$out" | awk '{print $2 + $3}' | median)
	rss=$(grep -o 'WALL .* RSS [0-9]*' "$out" | awk '{print $NF}' | median)
	echo "| $name | $(du -sm "$dir" | cut -f1) | $(ls "$dir" | wc -l) | $wall | $cpu | $((rss / 1024)) | $(du -sm "$work/$name.db" | cut -f1) |"
	grep -m1 '^correlation:' "$out" | sed 's/^/    /' >&2
	grep -E '^(CPU s|write):|^callpath analyze --mpi: rank' "$out" | sed 's/^/    /' >&2
	grep -m1 'contexts' "$out" | sed 's/^/    /' >&2
}

# threads cases: the base binary (if any), then each -j
measure_threads() {
	local name=$1 dir=$2
	[ -z "${CALLPATH_BASE:-}" ] || measure "$name-base" "$dir" "" "$CALLPATH_BASE" analyze
	for j in $JOBS; do
		measure "$name-j$j" "$dir" "" "$callpath" analyze -j "$j"
	done
}

echo "date: $(date -u '+%Y-%m-%d %H:%M UTC'); commit $(git -C "$here" rev-parse --short HEAD); $(nproc) CPUs; load before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "| case | measurement MB | files | wall s (median of $runs) | CPU s | peak RSS MB | database MB |"
echo "|---|---|---|---|---|---|---|"
rm -rf "$work/threads" "$work/threads-hot" "$work/procs"
"$work/gen" "$work/threads" "$libc" "$bid" "$lo" "$hi" threads "$THREADS" "$SAMPLES" "$CONTEXTS" "$DEPTH" 1
measure_threads "threads" "$work/threads"
rm -rf "$work/threads"
"$work/gen" "$work/threads-hot" "$libc" "$bid" "$lo" "$hi" threads "$THREADS" "$SAMPLES" "$CONTEXTS" "$DEPTH" 3
measure_threads "threads-hot" "$work/threads-hot"
rm -rf "$work/threads-hot"
"$work/gen" "$work/procs" "$libc" "$bid" "$lo" "$hi" procs "$PROCS" 100
measure "procs" "$work/procs" 64
rm -rf "$work/procs"
"$work/gen" "$work/ranks" "$libc" "$bid" "$lo" "$hi" ranks "$RANKS" "$RTHREADS" 250 5000 "$DEPTH"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
for k in $KS; do
	measure "ranks-K$k" "$work/ranks" 64 mpirun --oversubscribe -np "$k" "$callpath" analyze --mpi
done
