#!/bin/bash
# Runs the fuzzer of `callpath view`'s request handling (tests/fuzz/fuzz-view-query.c) for a
# bounded time (CP_FUZZ_SECONDS, default 10) from seeds covering every endpoint and
# parameter; any crash, leak or sanitizer report fails the test (the reproducer is kept).
# Skipped when clang or libFuzzer is missing.
source "$(dirname "$0")/lib.sh"
source "$CP_SOURCE_DIR/tests/fuzz/fuzz-lib.sh"
fuzz_require fuzz-view-query
mkdir "$WORK/corpus"
i=0
while read -r line; do
	printf '%s' "$line" >"$WORK/corpus/seed-$((i++))"
done <<'END'
/api/info
/api/metrics?derived=x%3Dcputime*2&derived=y%3Dratio%2Bcycles
/api/children?node=0&sort=0:excl&threshold=1.5&limit=2&offset=1
/api/children?node=1.n&view=td
/api/children?view=bu&node=b3&stat=max
/api/children?view=flat&node=f2&sort=name&thread=1
/api/node?node=5&rank=0
/api/search?q=ma.n&view=bu&limit=3
/api/search?q=(w|m)ork&view=flat
/api/source?file=0&derived=z%3Dcycles/cputime
/api/source?file=1&thread=0
/api/flame?node=1&metric=1&min=0.0001&depth=3
/api/sandwich?proc=1&metric=0&depth=2
/api/callgraph?nodes=5&metric=1
/api/threads?node=3&metric=2
/api/version
/api/children?node=99999&token=abc&_=1
END
fuzz_run fuzz-view-query "${CP_FUZZ_SECONDS:-10}" 4096 corpus
