#!/bin/bash
# A short libFuzzer run (ASan + UBSan) of the measurement reader (tests/fuzz/fuzz-measure.c):
# no crash, no sanitizer report, no leak. Longer runs: tests/fuzz/run.sh SECONDS. (The
# report's views read profile databases: random databases go through every view, statistic,
# option and format in tests/unit/report/test-dbviews.c, test_random.)
. "$(dirname "$0")/lib.sh"

require_tool clang
echo 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { return 0; }' >"$WORK/probe.c"
clang -fsanitize=fuzzer "$WORK/probe.c" -o "$WORK/probe" 2>/dev/null ||
	skip "clang cannot build libFuzzer targets here"
OUT=$WORK/fuzz bash "$CP_SOURCE_DIR/tests/fuzz/run.sh" 20 >"$WORK/fuzz.log" 2>&1 || {
	tail -40 "$WORK/fuzz.log" >&2
	fail "the fuzzer found a problem (see above)"
}
grep -E "^Done [0-9]+ runs" "$WORK/fuzz.log" || fail "the fuzzer did not complete"
note "ok"
