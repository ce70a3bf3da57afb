#!/bin/sh
# Completeness of callpath's unwinder on the test workloads: each -O2 (no frame pointer),
# -O2fp and -O0 workload runs with bench/unwind/sampler.c preloaded (CPU-time timer,
# ~250 Hz here: the kernel tick; CP_SAMPLER_WALL=1 for a 10 kHz wall-clock timer that also
# samples blocked threads), and the per-program sample counts are summed.
#   [CP_SAMPLER_WALL=1] bench/unwind/completeness.sh [WORKLOAD_DIR]
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
WL=${1:-$ROOT/build/tests/workloads}
OUT=${OUT:-/tmp/cp-bench-unwind}
mkdir -p "$OUT"
gcc -std=gnu11 -D_GNU_SOURCE -O2 -g -fPIC -shared -fvisibility=hidden -ftls-model=initial-exec \
    -I"$ROOT/src" "$ROOT/bench/unwind/sampler.c" "$ROOT"/src/runtime/unwind/*.c \
    "$ROOT/src/base/error.c" -o "$OUT/cp-sampler.so" -ldl -lpthread -lrt
printf "| workload | samples | complete | partial | failed | %% complete |\n|---|---|---|---|---|---|\n"
tot=0; comp=0
for v in O2 O2fp O0; do
	for w in chain callers recurse threads blocking dlopen ownsig forkexec; do
		exe="$WL/$w.$v"
		[ -x "$exe" ] || continue
		args=""
		[ "$w" = dlopen ] && args="$WL/libdlwork.so"
		line=$(LD_PRELOAD="$OUT/cp-sampler.so" "$exe" $args 2>&1 >/dev/null | grep '^cp-sampler:' | head -1)
		set -- $line
		s=$3; c=$5; p=$7; f=$9
		tot=$((tot + s)); comp=$((comp + c))
		pct=$(awk -v c="$c" -v s="$s" 'BEGIN {printf "%.2f", s ? 100 * c / s : 0}')
		printf "| %s.%s | %s | %s | %s | %s | %s |\n" "$w" "$v" "$s" "$c" "$p" "$f" "$pct"
	done
done
awk -v c="$comp" -v s="$tot" 'BEGIN {printf "| **all** | %d | %d | | | %.3f |\n", s, c, s ? 100 * c / s : 0}'
