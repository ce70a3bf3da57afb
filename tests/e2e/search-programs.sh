#!/bin/bash
# callpath search on a script that runs two different programs at once (docs/cmd-search.md,
# "Processes"): the busier is searched first; when its search is complete while the other
# still runs, the other executable's process is searched next (a process of an executable
# already searched completely is not searched again): compute's hot loop is found in
# each, each focus naming its process. (Runs and checks: search-procs-check.py.)
. "$(dirname "$0")/lib.sh"
require_built "$CALLPATH" "$CP_WORKLOADS/search-loops.O2"
wl=$CP_WORKLOADS/search-loops.O2
cp "$wl" "$WORK/other-loops"
CALLPATH=$CALLPATH python3 "$CP_SOURCE_DIR/tests/e2e/search-procs-check.py" "$WORK/m" \
	search-loops.O2,other-loops --search all --expect "(len(d['processes']) == 2 and
    {p['program'].rsplit('/', 1)[1] for p in d['processes']} == {'search-loops.O2',
    'other-loops'} and not d['processes'][0]['program_exited'])" \
	-- sh -c "\"$wl\" 20 & \"$WORK/other-loops\" 20; wait" || fail "two programs at once"
note "ok"
