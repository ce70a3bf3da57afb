#!/bin/bash
# Longer runs of a fuzzer than the test suite's: tests/fuzz/run.sh [SECONDS [NAME]]
# NAME is report-fuzz (the measurement reader, default), db-fuzz or struct-fuzz: runs that
# e2e test for SECONDS (default 60) against the build in CP_BUILD_DIR (default build/).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
CP_FUZZ_SECONDS=${1:-60} exec bash "$here/../e2e/${2:-report-fuzz}.sh"
