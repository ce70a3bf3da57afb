#!/bin/bash
# A program that ends during the search: the partial result (the nodes decided so far, the
# rest pending or queued) is printed and stored, and said to be partial.
. "$(dirname "$0")/lib.sh"
require_built "$CALLPATH" "$CP_WORKLOADS/search-loops.O2"
# 2 s of program; the search needs 4 rounds of 0.5 s after 0.2 s (main, its loop, compute
# and cold, compute's loops) without Deep Start: it is cut short with a few decided.
run "$CALLPATH" search -q --no-deep-start --after 0.2 --interval 0.5 -o "$WORK/m" -- \
	"$CP_WORKLOADS/search-loops.O2" 2
grep -q "the program ended during the search (partial result)" "$WORK/run.out" ||
	fail "not said partial: $(cat "$WORK/run.out")"
grep -q "^Search history graph:" "$WORK/run.out" || fail "no graph printed"
json_assert "$WORK/m/search.json" "(d['program_exited'] and len(d['nodes']) >= 1)" \
	"search.json: $(cat "$WORK/m/search.json")"
json_assert "$WORK/m/search.json" "(any(n['state'] in ('true', 'false') for n in d['nodes']))" \
	"nothing decided before the program ended"
note "ok"
