#!/bin/bash
# callpath search through exec (docs/cmd-search.md, "Processes"): a wrapper that execs the
# program (`sh -c 'exec PROG'`: the same pid, a new image) is searched as that program;
# a program that execs another executable after the search began ends the search of its
# first image, and the new image (same pid, next generation, its own code model) is
# searched next: compute's hot loop is found in it.
. "$(dirname "$0")/lib.sh"
require_built "$CALLPATH" "$CP_WORKLOADS/search-loops.O2"
wl=$CP_WORKLOADS/search-loops.O2
hot=$(grep -n "loop 3: the hot one" "$CP_SOURCE_DIR/tests/workloads/search-loops.c" | cut -d: -f1)
check=$CP_SOURCE_DIR/tests/e2e/search-procs-check.py

run "$CALLPATH" search --hypotheses CPUBound --after 0.3 --for 10 --kill --format json \
	-o "$WORK/a" -- sh -c "exec \"$wl\" 20"
python3 "$check" "$WORK/a" "$hot" search-loops.O2 || fail "exec wrapper"

# cold() for 1.5 s, then exec of another executable (a copy: another module path)
cp "$wl" "$WORK/loops-after-exec"
run "$CALLPATH" search --hypotheses CPUBound --after 0.3 --for 12 --kill --format json \
	-o "$WORK/b" -- "$wl" 20 exec "$WORK/loops-after-exec"
json_assert "$WORK/b/search.json" "(d['processes'][0]['pid'] == d['processes'][-1]['pid']
    and d['processes'][0]['gen'] < d['processes'][-1]['gen']
    and d['processes'][0]['program_exited'])" \
	"the new image was not searched: $(head -c 1500 "$WORK/b/search.json")"
python3 "$check" "$WORK/b" "$hot" loops-after-exec --min-searches 2 || fail "exec after the search began"
note "ok"
