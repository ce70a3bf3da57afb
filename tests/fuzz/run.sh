#!/bin/bash
# Builds the measurement-reader fuzzer with clang (libFuzzer + ASan + UBSan) and runs it for
# SECONDS (default 60) on a seed corpus of valid files from tests/fuzz/seeds.
set -eu
SRC=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${OUT:-/tmp/callpath-fuzz}
SECONDS_TO_RUN=${1:-60}
mkdir -p "$OUT/corpus"
clang -g -O1 -std=gnu11 -D_GNU_SOURCE -fsanitize=fuzzer,address,undefined \
	-fno-sanitize-recover=undefined -I"$SRC/src" \
	"$SRC/tests/fuzz/fuzz-measure.c" "$SRC"/src/format/measure-read.c "$SRC"/src/format/measure-dir.c \
	"$SRC"/src/base/error.c "$SRC"/src/base/strbuf.c \
	"$SRC"/src/base/xalloc.c -o "$OUT/fuzz-measure"
cp "$SRC"/tests/fuzz/seeds/* "$OUT/corpus/" 2>/dev/null || true
"$OUT/fuzz-measure" -max_total_time="$SECONDS_TO_RUN" -max_len=4096 "$OUT/corpus"
