#!/bin/bash
# callpath search on a program started through a shell script (docs/cmd-search.md,
# "Processes"): the shell runs the workload as a child and waits in wait4; the search
# must search the workload (the busiest process), not the shell, and find compute's hot
# loop there, its focus naming the process (/Machine/HOST/PID); the choice is said on
# stderr. When the searched process ends while the script goes on to a second one, the
# search goes on to that one: the result holds both searches, search.json and the
# database's search table alike. (Runs and checks: search-procs-check.py.)
. "$(dirname "$0")/lib.sh"
require_built "$CALLPATH" "$CP_WORKLOADS/search-loops.O2"
wl=$CP_WORKLOADS/search-loops.O2
check() { CALLPATH=$CALLPATH python3 "$CP_SOURCE_DIR/tests/e2e/search-procs-check.py" "$@"; }

# a child of the script (`; true` keeps the shell from exec'ing it)
check "$WORK/a" search-loops.O2 -- sh -c "\"$wl\" 20; true" || fail "child of a script"
pid=$(sed -n 's/^callpath search: searching process \([0-9]*\) (.*search-loops.O2 20): .*/\1/p' \
	"$WORK/a.err")
[ -n "$pid" ] || fail "the choice was not said: $(grep 'searching process' "$WORK/a.err")"
json_assert "$WORK/a/search.json" "(d['processes'][0]['pid'] == $pid)" "another pid said"

# two programs in turn: the first ends during its search, the second is searched next
check "$WORK/b" search-loops.O2 --min-searches 2 --expect "(
    d['processes'][0]['program_exited'] and
    d['processes'][0]['command'].endswith('search-loops.O2 1.2') and
    d['processes'][-1]['command'].endswith('search-loops.O2 20'))" \
	-- sh -c "\"$wl\" 1.2; \"$wl\" 20; true" || fail "the second program"
note "ok"
