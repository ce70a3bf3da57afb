#!/bin/bash
# callpath search on a program that forks a busy worker (no exec) and waits for it
# (docs/cmd-search.md, "Processes"): the worker gets its own control channel, and the
# search searches it (the busiest process), not the waiting parent, and finds compute's
# hot loop there.
. "$(dirname "$0")/lib.sh"
require_built "$CALLPATH" "$CP_WORKLOADS/search-loops.O2"
hot=$(grep -n "loop 3: the hot one" "$CP_SOURCE_DIR/tests/workloads/search-loops.c" | cut -d: -f1)
run "$CALLPATH" search --hypotheses CPUBound --after 0.3 --for 10 --kill --format json \
	-o "$WORK/m" -- "$CP_WORKLOADS/search-loops.O2" 20 fork
worker=$(sed -n 's/^search-loops: worker \([0-9]*\) of [0-9]*$/\1/p' "$WORK/run.err")
[ -n "$worker" ] || fail "the workload did not say its worker: $(cat "$WORK/run.err")"
python3 "$CP_SOURCE_DIR/tests/e2e/search-procs-check.py" "$WORK/m" "$hot" search-loops.O2 \
	--pid "$worker" || fail "the forked worker"
note "ok"
