#!/bin/bash
# callpath search through exec (docs/cmd-search.md, "Processes"): a wrapper that execs the
# program (`sh -c 'exec PROG'`: the same pid, a new image) is searched as that program;
# a program that execs another executable after the search began ends the search of its
# first image, and the new image (same pid, next generation, its own code model) is
# searched next: compute's hot loop is found in it. (Runs and checks:
# search-procs-check.py.)
. "$(dirname "$0")/lib.sh"
require_built "$CALLPATH" "$CP_WORKLOADS/search-loops.O2"
wl=$CP_WORKLOADS/search-loops.O2
check() { CALLPATH=$CALLPATH python3 "$CP_SOURCE_DIR/tests/e2e/search-procs-check.py" "$@"; }

check "$WORK/a" search-loops.O2 -- sh -c "exec \"$wl\" 20" || fail "exec wrapper"

# cold() for 1.5 s, then exec of another executable (a copy: another module path)
cp "$wl" "$WORK/loops-after-exec"
check "$WORK/b" loops-after-exec --min-searches 2 --expect "(
    d['processes'][0]['pid'] == d['processes'][-1]['pid'] and
    d['processes'][0]['gen'] < d['processes'][-1]['gen'] and
    d['processes'][0]['program_exited'])" \
	-- "$wl" 20 exec "$WORK/loops-after-exec" || fail "exec after the search began"
note "ok"
