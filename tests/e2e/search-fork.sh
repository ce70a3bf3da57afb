#!/bin/bash
# callpath search on a program that forks a busy worker (no exec) and waits for it
# (docs/cmd-search.md, "Processes"): the worker gets its own control channel, and the
# search searches it (the busiest process), not the waiting parent, and finds compute's
# hot loop there. (Runs and checks: search-procs-check.py.)
. "$(dirname "$0")/lib.sh"
require_built "$CALLPATH" "$CP_WORKLOADS/search-loops.O2"
CALLPATH=$CALLPATH python3 "$CP_SOURCE_DIR/tests/e2e/search-procs-check.py" "$WORK/m" \
	search-loops.O2 -- "$CP_WORKLOADS/search-loops.O2" 20 fork || fail "the forked worker"
worker=$(sed -n 's/^search-loops: worker \([0-9]*\) of [0-9]*$/\1/p' "$WORK/m.err")
[ -n "$worker" ] || fail "the workload did not say its worker: $(cat "$WORK/m.err")"
json_assert "$WORK/m/search.json" "(d['processes'][-1]['pid'] == $worker)" \
	"searched $(grep 'searching process' "$WORK/m.err"), not the worker $worker"
note "ok"
