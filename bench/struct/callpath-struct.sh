#!/bin/bash
# Whole `callpath struct --no-cache` (ELF + symbols + DWARF inline tree + lines + CFG +
# loops + scope tree + structure file) on large real binaries: wall and CPU time and peak
# RSS (/usr/bin/time -v), next to `objdump -d --line-numbers` on the same file (a floor
# for decode + line work) and `callpath struct --no-loops`. Single-threaded (-j 1).
#   bench/struct/callpath-struct.sh [-r RUNS] [-B BUILD_DIR] [BINARY...]
set -euo pipefail
runs=3
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
export XDG_CACHE_HOME=$(mktemp -d)
trap 'rm -rf "$XDG_CACHE_HOME"' EXIT

median() { sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
# measure CMD...: prints "wall cpu rss_mb" (one run)
measure() {
	/usr/bin/time -v "$@" 2>&1 >/dev/null | awk '
		/Elapsed \(wall clock\)/ { n = split($NF, t, ":"); w = (n == 3) ? t[1]*3600 + t[2]*60 + t[3] : t[1]*60 + t[2] }
		/User time/ { u = $NF } /System time/ { s = $NF }
		/Maximum resident set size/ { r = $NF / 1024 }
		END { printf "%.2f %.2f %.0f\n", w, u + s, r }'
}
col() { awk -v c="$1" '{print $c}' | median; }

echo "date: $(date -u '+%Y-%m-%d %H:%M UTC'); commit $(git -C "$(dirname "$0")" rev-parse --short HEAD); runs: $runs"
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '| binary | file MB | .text MB | procedures | loops | struct wall s | struct CPU s | struct RSS MB | RSS / .text | --no-loops CPU s | objdump -d -l CPU s | struct / objdump (CPU) |\n'
printf '|---|---|---|---|---|---|---|---|---|---|---|---|\n'
for bin in "$@"; do
	[ -r "$bin" ] || { echo "skip $bin (missing)" >&2; continue; }
	full=$(for ((i = 0; i < runs; i++)); do measure "$cp" struct --no-cache -j 1 "$bin"; done)
	nol=$(for ((i = 0; i < runs; i++)); do measure "$cp" struct --no-cache -j 1 --no-loops "$bin"; done)
	od=$(for ((i = 0; i < runs; i++)); do measure objdump -d --line-numbers "$bin"; done)
	summary=$("$cp" struct "$bin")
	procs=$(echo "$summary" | sed -n 's/.*: \([0-9]*\) procedures, \([0-9]*\) loops.*/\1/p')
	loops=$(echo "$summary" | sed -n 's/.*: \([0-9]*\) procedures, \([0-9]*\) loops.*/\2/p')
	text=$(size -A "$bin" | awk '$1==".text"{printf "%.1f", $2/1e6}')
	fmb=$(stat -L -c %s "$bin" | awk '{printf "%.1f", $1/1e6}')
	w=$(echo "$full" | col 1); c=$(echo "$full" | col 2); r=$(echo "$full" | col 3)
	nc=$(echo "$nol" | col 2); oc=$(echo "$od" | col 2)
	printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' "$(basename "$bin")" \
		"$fmb" "$text" "$procs" "$loops" "$w" "$c" "$r" \
		"$(awk -v r="$r" -v t="$text" 'BEGIN{printf "%.1f", r/t}')" "$nc" "$oc" \
		"$(awk -v a="$c" -v b="$oc" 'BEGIN{printf "%.2f", a/b}')"
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
