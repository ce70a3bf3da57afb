#!/bin/bash
# Runs the ELF/DWARF front-end fuzzer (tests/fuzz/fuzz-elf.c) for a bounded time
# (CP_FUZZ_SECONDS, default 30) from the fixtures and a structure file as seeds. Builds it
# with clang -fsanitize=fuzzer,address from the sources; skips when clang or libFuzzer is
# missing. Any crash, leak or sanitizer report fails the test (the reproducer is kept).
source "$(dirname "$0")/lib.sh"
require_tool clang
FX=$CP_BUILD_DIR/tests/fixtures/src
[ -x "$FX/loops.gcc.O2" ] || skip "fixtures not built ($FX)"
printf 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { return 0; }\n' >"$WORK/probe.c"
clang -fsanitize=fuzzer "$WORK/probe.c" -o "$WORK/probe" 2>/dev/null || skip "clang has no libFuzzer"
S=$CP_SOURCE_DIR/src
mapfile -t SRCS < <(find "$S/analyze" "$S/format" "$S/base" "$S/arch/x86_64" -maxdepth 3 -name '*.c' \
	-not -path '*/sigsafe/*' | sort)
clang -g -O1 -fsanitize=fuzzer,address,undefined \
	-D_GNU_SOURCE -DCALLPATH_VERSION='"fuzz"' -I"$S" "${SRCS[@]}" "$CP_SOURCE_DIR/tests/fuzz/fuzz-elf.c" \
	-o "$WORK/fuzz-elf" -ldw -lelf -lZydis -lZycore -lstdc++ 2>"$WORK/build.err" ||
	{ cat "$WORK/build.err" >&2; fail "the fuzzer does not build"; }
mkdir "$WORK/corpus"
for f in loops.gcc.O2 loops.clang.O2 nest.gfortran.O2 libloops.gcc.O2.so loops.gcc.O2.stripped; do
	[ -e "$FX/$f" ] && cp "$FX/$f" "$WORK/corpus/"
done
XDG_CACHE_HOME=$WORK/cache "$CALLPATH" struct "$FX/loops.gcc.O2" -o "$WORK/corpus/loops.cpst" >/dev/null ||
	fail "cannot write the structure-file seed"
cd "$WORK" || exit 1
secs=${CP_FUZZ_SECONDS:-30}
# No UBSan suppressions: every report halts.
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
ASAN_OPTIONS=detect_leaks=1 ./fuzz-elf -max_total_time="$secs" -rss_limit_mb=2048 -timeout=20 \
	-max_len=65536 -print_final_stats=1 corpus >"$WORK/fuzz.log" 2>&1
rc=$?
grep -E -A12 "runtime error|ERROR: (Address|Leak)Sanitizer|deadly signal" "$WORK/fuzz.log" | head -40
tail -6 "$WORK/fuzz.log"
if [ $rc -ne 0 ]; then
	mkdir -p "$CP_BUILD_DIR/fuzz-artifacts"
	cp "$WORK"/crash-* "$WORK"/leak-* "$WORK"/timeout-* "$CP_BUILD_DIR/fuzz-artifacts/" 2>/dev/null
	fail "the fuzzer found a problem (reproducers in $CP_BUILD_DIR/fuzz-artifacts)"
fi
note "no findings in ${secs}s"
