#!/bin/bash
# callpath search on a program started through a shell script (docs/cmd-search.md,
# "Processes"): the shell runs the workload as a child and waits in wait4; the search
# must search the workload (the busiest process), not the shell, and find compute's hot
# loop there, its focus naming the process (/Machine/HOST/PID). When the searched process
# ends while the script goes on to a second one, the search goes on to that one: the
# result holds both searches, search.json and the database's search table alike.
. "$(dirname "$0")/lib.sh"
require_built "$CALLPATH" "$CP_WORKLOADS/search-loops.O2"
wl=$CP_WORKLOADS/search-loops.O2
hot=$(grep -n "loop 3: the hot one" "$CP_SOURCE_DIR/tests/workloads/search-loops.c" | cut -d: -f1)
check=$CP_SOURCE_DIR/tests/e2e/search-procs-check.py

# a child of the script (`; true` keeps the shell from exec'ing it)
run "$CALLPATH" search --hypotheses CPUBound --after 0.3 --for 10 --kill --format json \
	-o "$WORK/a" -- sh -c "\"$wl\" 20; true"
python3 "$check" "$WORK/a" "$hot" search-loops.O2 || fail "child of a script"
pid=$(sed -n 's/^callpath search: searching process \([0-9]*\) (.*search-loops.O2 20): .*/\1/p' \
	"$WORK/run.err")
[ -n "$pid" ] || fail "the choice of the workload was not said: $(grep 'searching process' "$WORK/run.err")"
python3 "$check" "$WORK/a" "$hot" search-loops.O2 --pid "$pid" >/dev/null || fail "another pid said"

# two programs in turn: the first ends during its search, the second is searched next
run "$CALLPATH" search --hypotheses CPUBound --after 0.3 --for 12 --kill --format json \
	-o "$WORK/b" -- sh -c "\"$wl\" 1.2; \"$wl\" 20; true"
json_assert "$WORK/b/search.json" "(d['processes'][0]['program_exited'] and
    d['processes'][0]['command'].endswith('search-loops.O2 1.2') and
    d['processes'][-1]['command'].endswith('search-loops.O2 20'))" \
	"not searched in turn: $(head -c 1500 "$WORK/b/search.json")"
python3 "$check" "$WORK/b" "$hot" search-loops.O2 --min-searches 2 || fail "the second program"
note "ok"
