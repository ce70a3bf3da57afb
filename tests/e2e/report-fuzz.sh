#!/bin/bash
# A short libFuzzer run (ASan + UBSan) of the measurement reader (tests/fuzz/fuzz-measure.c)
# on the seeds in tests/fuzz/seeds: no crash, no sanitizer report, no leak. Longer runs:
# tests/fuzz/run.sh SECONDS. (The report's views read profile databases: random databases
# go through every view, statistic, option and format in tests/unit/report/test-dbviews.c,
# test_random.)
source "$(dirname "$0")/lib.sh"
source "$CP_SOURCE_DIR/tests/fuzz/fuzz-lib.sh"
fuzz_require fuzz-measure
mkdir "$WORK/corpus"
cp "$CP_SOURCE_DIR"/tests/fuzz/seeds/* "$WORK/corpus/"
fuzz_run fuzz-measure "${CP_FUZZ_SECONDS:-20}" 4096 corpus
