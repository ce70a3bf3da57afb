#!/bin/sh
# Unwind cost benchmark: callpath's unwinder vs libunwind's unw_backtrace vs a frame-pointer
# walk, at depth 10 and 50; median of RUNS runs. Builds from the unwinder sources only
# (no other runtime part), into $OUT (default /tmp/cp-bench-unwind).
#   bench/unwind/run.sh [RUNS] [ITERS]
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${OUT:-/tmp/cp-bench-unwind}
RUNS=${1:-7}
ITERS=${2:-200000}
mkdir -p "$OUT"
CF="-std=gnu11 -D_GNU_SOURCE -O2 -g -I$ROOT/src"
SRC="$(echo "$ROOT"/src/runtime/unwind/*.c) $ROOT/src/base/error.c"
# The unwinder as the runtime builds it (hidden visibility, initial-exec TLS, no frame pointers).
gcc $CF -fomit-frame-pointer -fvisibility=hidden -ftls-model=initial-exec \
    "$ROOT/bench/unwind/bench-unwind.c" $SRC -o "$OUT/bench-unwind" -lunwind -lpthread
gcc $CF -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer \
    "$ROOT/bench/unwind/bench-unwind.c" $SRC -o "$OUT/bench-unwind-fp" -lunwind -lpthread

median() { sort -n | awk '{a[NR]=$1} END {m=a[int((NR+1)/2)]; printf "%s (%s-%s)", m, a[1], a[NR]}'; }

# Methods are interleaved within each round, so that load changes on a shared machine hit
# them alike; the cp/unw and cp/fp ratios are taken within a round, then their median.
printf "| method | depth | frames | ns/unwind median (min-max) | ns/frame median (min-max) |\n|---|---|---|---|---|\n"
for depth in 10 50; do
	rm -f "$OUT"/res.*
	for r in $(seq "$RUNS"); do
		for m in cp cpcold unw fp; do
			bin="$OUT/bench-unwind"
			[ "$m" = fp ] && bin="$OUT/bench-unwind-fp"
			it=$ITERS
			[ "$m" = cpcold ] && it=$((ITERS / 100))
			"$bin" "$m" "$depth" "$it" >>"$OUT/res.$m"
		done
	done
	for m in cp cpcold unw fp; do
		frames=$(head -1 "$OUT/res.$m" | awk '{print $3}')
		ns=$(awk '{print $4}' "$OUT/res.$m" | median)
		nsf=$(awk '{print $5}' "$OUT/res.$m" | median)
		printf "| %s | %s | %s | %s | %s |\n" "$m" "$depth" "$frames" "$ns" "$nsf"
	done
	paste "$OUT/res.cp" "$OUT/res.unw" "$OUT/res.fp" | awk '{print $5 / $10, $5 / $15}' >"$OUT/ratios"
	printf "| ratio per frame, depth %s | cp/unw %s | cp/fp %s | | |\n" "$depth" \
		"$(awk '{print $1}' "$OUT/ratios" | median)" "$(awk '{print $2}' "$OUT/ratios" | median)"
done

# Instructions per unwind (valgrind callgrind, deterministic: independent of the VM's load).
if [ "${INSTR:-0}" = 1 ] && command -v valgrind >/dev/null; then
	printf "\n| method | depth | instructions/unwind | instructions/frame |\n|---|---|---|---|\n"
	for depth in 10 50; do
		for m in cp unw fp; do
			bin="$OUT/bench-unwind"
			[ "$m" = fp ] && bin="$OUT/bench-unwind-fp"
			# two runs differing only in ITERS: the difference cancels startup costs
			a=$(valgrind --tool=callgrind --callgrind-out-file=/dev/null "$bin" "$m" "$depth" 2000 2>&1 | awk '/refs:/ {gsub(",","",$4); print $4}')
			b=$(valgrind --tool=callgrind --callgrind-out-file=/dev/null "$bin" "$m" "$depth" 12000 2>&1 | awk '/refs:/ {gsub(",","",$4); print $4}')
			frames=$("$bin" "$m" "$depth" 10 | awk '{print $3}')
			awk -v a="$a" -v b="$b" -v f="$frames" -v m="$m" -v d="$depth" \
			    'BEGIN {u = (b - a) / 10000; printf "| %s | %s | %.0f | %.1f |\n", m, d, u, u / f}'
		done
	done
fi
