#!/bin/bash
# A focus whose code cannot be patched (spin_back: a loop jumps back into its first 5
# bytes) is reported with the reason, decided from samples alone, and the search goes on:
# compute's hot loop is still found.
. "$(dirname "$0")/lib.sh"
require_built "$CALLPATH" "$CP_WORKLOADS/search-loops.O2"
run "$CALLPATH" search -q --after 0.3 --for 12 --kill --format json -o "$WORK/m" -- \
	"$CP_WORKLOADS/search-loops.O2" 20 refuse
cp "$WORK/run.out" "$WORK/r.json"
json_assert "$WORK/r.json" "(any(n['function'] == 'spin_back' and n['kind'] == 'function' and
    'jumps into the first 5 bytes' in (n['note'] or '') and n['state'] == 'true'
    for n in d['nodes']))" "spin_back not reported as unpatchable: $(head -c 3000 "$WORK/r.json")"
json_assert "$WORK/r.json" "(any('spin_back cannot be patched' in x for x in d['notes']))" "no note"
json_assert "$WORK/r.json" "(any(n['kind'] == 'loop' and n['function'] == 'compute' and
    n['state'] == 'true' for n in d['nodes']))" "the search did not go on to compute's loops"
note "ok"
