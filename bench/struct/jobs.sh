#!/bin/bash
# `callpath struct --no-cache -j 1` against `-j 2` on large real binaries, runs interleaved
# (j1, j2, j1, j2, ...): median wall and CPU seconds, peak RSS (/usr/bin/time -v), and the
# wall-time ratio. Checks that both give the same bytes.
#   bench/struct/jobs.sh [-r RUNS] [-B BUILD_DIR] [BINARY...]
set -euo pipefail
runs=5
build=${CP_BUILD_DIR:-$(dirname "$0")/../../build}
while getopts "r:B:" o; do
	case $o in
	r) runs=$OPTARG ;;
	B) build=$OPTARG ;;
	*) exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -gt 0 ] || set -- /lib/x86_64-linux-gnu/libc.so.6 /usr/bin/python3.11 \
	/usr/lib/x86_64-linux-gnu/libclang-cpp.so.14
cp=$build/callpath
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export XDG_CACHE_HOME=$tmp/cache

median() { sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
measure() { # prints "wall cpu rss_mb"
	/usr/bin/time -v "$@" 2>&1 >/dev/null | awk '
		/Elapsed \(wall clock\)/ { n = split($NF, t, ":"); w = (n == 3) ? t[1]*3600 + t[2]*60 + t[3] : t[1]*60 + t[2] }
		/User time/ { u = $NF } /System time/ { s = $NF }
		/Maximum resident set size/ { r = $NF / 1024 }
		END { printf "%.2f %.2f %.0f\n", w, u + s, r }'
}
col() { awk -v c="$1" '{print $c}' | median; }

echo "date: $(date -u '+%Y-%m-%d %H:%M UTC'); commit $(git -C "$(dirname "$0")" rev-parse --short HEAD); runs: $runs; CPUs: $(nproc)"
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '| binary | -j 1 wall s | -j 1 CPU s | -j 1 RSS MB | -j 2 wall s | -j 2 CPU s | -j 2 RSS MB | wall j1/j2 |\n'
printf '|---|---|---|---|---|---|---|---|\n'
for bin in "$@"; do
	[ -r "$bin" ] || { echo "skip $bin (missing)" >&2; continue; }
	: >"$tmp/j1"; : >"$tmp/j2"
	for ((i = 0; i < runs; i++)); do
		measure "$cp" struct --no-cache -j 1 "$bin" -o "$tmp/s1" >>"$tmp/j1"
		measure "$cp" struct --no-cache -j 2 "$bin" -o "$tmp/s2" >>"$tmp/j2"
	done
	cmp -s "$tmp/s1" "$tmp/s2" || { echo "-j 1 and -j 2 differ on $bin" >&2; exit 1; }
	w1=$(col 1 <"$tmp/j1"); c1=$(col 2 <"$tmp/j1"); r1=$(col 3 <"$tmp/j1")
	w2=$(col 1 <"$tmp/j2"); c2=$(col 2 <"$tmp/j2"); r2=$(col 3 <"$tmp/j2")
	printf '| %s | %s | %s | %s | %s | %s | %s | %s |\n' "$(basename "$bin")" "$w1" "$c1" "$r1" \
		"$w2" "$c2" "$r2" "$(awk -v a="$w1" -v b="$w2" 'BEGIN{printf "%.2f", a/b}')"
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
