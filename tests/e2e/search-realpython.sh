#!/bin/bash
# callpath search on Debian's python3 (a large stripped interpreter: its eval loop). Every
# function that holds at least 90 % of the program's time (Py_BytesMain, Py_RunMain,
# _PyEval_EvalFrameDefault, ... in `report` of the same measurement) is decided CPUBound
# with most of the time: the CPU samples, the threads' wait for a CPU (schedstat) and the
# interval's time are taken together. Before, schedstat was read after the files had been
# processed, which under load took long enough that the runnable time was of another window:
# Py_RunMain, under all the time, was decided at 15-55 % (bench/RESULTS.md, "Real programs").
. "$(dirname "$0")/lib.sh"
PY=/usr/bin/python3
[ -x $PY ] || skip "Debian's python3 is not installed"
require_built "$CALLPATH"
"$CALLPATH" search -q --hypotheses CPUBound --after 0.3 --for 8 --kill -o "$WORK/m" -- \
	$PY -c '
def f(n):
    s = 0
    for i in range(n):
        s += i * i % 7
    return s
print(f(400000000))' >"$WORK/out" 2>"$WORK/err" || fail "search failed: $(tail -5 "$WORK/err")"
"$CALLPATH" report "$WORK/m" --view flat --format json --threshold 0 -o "$WORK/flat.json" \
	2>/dev/null || fail "report of the search's measurement failed"
python3 - "$WORK/m/search.json" "$WORK/flat.json" <<'PY' || fail "a function holding all the time was decided low"
import json, sys
d = json.load(open(sys.argv[1]))
flat = json.load(open(sys.argv[2]))
total = flat["nodes"][0]["inclusive"][0]
whole = {n["name"] for n in flat["nodes"] if n["kind"] == "procedure" and n["inclusive"][0] >= 0.9 * total}
nodes = [n for n in d["nodes"] if n["kind"] == "function" and n["function"] in whole
         and n["thread"] is None and n["state"] in ("true", "false")]
print("; ".join("%s %.1f%% at %.2f s" % (n["function"], 100 * n["value"], n["decided_s"]) for n in nodes))
assert len(nodes) >= 2, ("too few decided", whole, [(n["name"], n["inclusive"][0] / total) for n in flat["nodes"] if n["kind"] == "procedure"][:8])
low = [n for n in nodes if n["value"] < 0.65]
assert not low, low
PY
