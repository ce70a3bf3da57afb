#!/bin/bash
# Structure recovery, CFG and loops: time decode / no-return inference + CFG + loops for
# every procedure of large real binaries (the bench mode of the unit test
# unit-analyze-test-cfg-libc), next to `objdump -d` on the same files.
#   bench/struct/run.sh [-r RUNS] [-B BUILD_DIR] [BINARY...]
# Prints, per binary, the median of RUNS runs of each figure, and the objdump median.
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
	/usr/lib/jvm/java-17-openjdk-amd64/lib/server/libjvm.so
cmake --build "$build" --target unit-analyze-test-cfg-libc -j2 >/dev/null
tool=$build/tests/unit-analyze-test-cfg-libc

median() { sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

echo "date: $(date -u '+%Y-%m-%d %H:%M UTC'); commit $(git -C "$(dirname "$0")" rev-parse --short HEAD)"
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
# Stage figures and the objdump column are CPU seconds (user+sys): the VM is shared.
printf '| binary | .text MB | insns | decode (flow) s | decode (operands) s | infer+CFG+loops s | whole run CPU s (wall) | peak RSS MB | objdump -d CPU s | loops (irreducible) | jump tables | unresolved |\n'
printf '|---|---|---|---|---|---|---|---|---|---|---|---|\n'
for bin in "$@"; do
	[ -r "$bin" ] || { echo "skip $bin (missing)" >&2; continue; }
	out=$(mktemp)
	for ((i = 0; i < runs; i++)); do
		/usr/bin/time -f 'WALL %e CPU %U %S RSS %M' "$tool" --bench "$bin" >>"$out" 2>&1
	done
	fl=$(grep -o 'without operands [0-9.]*' "$out" | awk '{print $3}' | median)
	op=$(grep -o 'with operands [0-9.]*' "$out" | awk '{print $3}' | median)
	cfg=$(grep -o 'loops [0-9.]* s' "$out" | awk '{print $2}' | median)
	wall=$(grep -o 'WALL [0-9.]*' "$out" | awk '{print $2}' | median)
	cpu=$(grep -o 'CPU [0-9.]* [0-9.]*' "$out" | awk '{print $2 + $3}' | median)
	rss=$(grep -o 'RSS [0-9]*$' "$out" | awk '{print $2/1024}' | median)
	insns=$(grep -o '[0-9]* insns' "$out" | head -1 | awk '{print $1}')
	loops=$(grep -o '[0-9]* loops ([0-9]* irreducible' "$out" | head -1 | awk '{print $1 " (" substr($3,2) ")"}')
	jt=$(grep -o '[0-9]* jump tables' "$out" | head -1 | awk '{print $1}')
	un=$(grep -o '[0-9]* unresolved' "$out" | head -1 | awk '{print $1}')
	text=$(size -A "$bin" | awk '$1==".text"{printf "%.1f", $2/1e6}')
	od=$(for ((i = 0; i < runs; i++)); do
		/usr/bin/time -f '%U %S' objdump -d "$bin" 2>&1 >/dev/null | tail -1 |
			awk '{print $1 + $2}'
	done | median)
	printf '| %s | %s | %s | %s | %s | %s | %s (%s) | %.0f | %s | %s | %s | %s |\n' \
		"$(basename "$bin")" "$text" "$insns" "$fl" "$op" "$cfg" "$cpu" "$wall" "$rss" "$od" \
		"$loops" "$jt" "$un"
	rm -f "$out"
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
