#!/usr/bin/env bash
# `callpath search` finds planted bottlenecks (bench/search/, issue 14): the hottest
# loop, 3rd of 5 in a 300-line function, at loop precision; lock contention on one of four
# locks (the function waiting for it); the hot loop of a shared library the program loads
# with dlopen after start-up, at loop precision (the library enters the code model when
# the search sees it mapped; main reaches it through a call through a pointer, seen on
# the sampled paths). Each must be among the search's top 3. Scoring is
# bench/search/run.py's (the benchmark's own), on short runs of the programs (5 s each;
# dlopen 8 s, as it runs without Deep Start: the search must get from main to the
# library's loop by refinement alone, four levels, which takes longer on a loaded machine).
#
# Registered by tests/CMakeLists.txt only once src/cli/cmd-search.c exists; from then on a
# missing or failing `callpath search` fails this test (it never skips for that).
source "$(dirname "$0")/lib.sh"

[ -x "$CP_BUILD_DIR/bench/search/loop3of5" ] || fail "planted programs not built in $CP_BUILD_DIR/bench/search"
"$CALLPATH" search --help >/dev/null 2>&1 || fail "callpath search is missing (or --help fails)"
python3 "$CP_SOURCE_DIR/bench/search/run.py" --build "$CP_BUILD_DIR" --seconds 5 \
	--base-runs 0 --no-record --search-runs 1 --require-hits \
	--only loop3of5,lockcontention --out "$WORK/results.json" ||
	fail "a planted cause is not in the search's top 3 (table above)"
python3 "$CP_SOURCE_DIR/bench/search/run.py" --build "$CP_BUILD_DIR" --seconds 8 \
	--base-runs 0 --no-record --search-runs 1 --require-hits --only dlopen \
	--search-opts '--format json --no-deep-start' --out "$WORK/results-nodeep.json" ||
	fail "without Deep Start, the library's hot loop is not in the search's top 3"
note "planted causes found"
