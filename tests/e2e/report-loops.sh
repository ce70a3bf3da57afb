#!/bin/bash
# callpath report on loopinline.O2 (a hot loop in an always-inline kernel, inlined into
# compute() inside another loop): the top-down view shows
#   compute -> loop at loopinline.c:OUTER -> kernel [inlined] -> loop -> statements
# and the flat view with --flatten 3 ranks the outer loop among the statements and loops of
# all procedures (depth 1), holding most of the time.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/report-helpers/record.sh"

SRC=$CP_SOURCE_DIR/tests/workloads/loopinline.c
line() { grep -n "MARK:$1" "$SRC" | head -1 | cut -d: -f1; }
report_record "$WORK/m" "$CP_WORKLOADS/loopinline.O2" 1500
report_json "$WORK/td.json" "$WORK/m" --view top-down
python3 - "$WORK/td.json" "$(line outer-loop)" "$(line inline-call)" "$(line inner-body)" <<'PY' ||
import json, sys
d = json.load(open(sys.argv[1]))
outer, call, body = map(int, sys.argv[2:5])
nodes = {n["id"]: n for n in d["nodes"]}
kids = lambda n: [k for k in d["nodes"] if k["parent"] == n["id"]]
total = d["nodes"][0]["inclusive"][0]
comp = [n for n in d["nodes"] if n["kind"] == "procedure" and n["name"] == "compute"]
assert len(comp) == 1, comp
loops = [k for k in kids(comp[0]) if k["kind"] == "loop" and k["line"] <= outer <= k["line_end"]]
assert loops, f"no loop covering line {outer} below compute: {kids(comp[0])}"
lp = loops[0]
assert lp["name"].startswith("loop at loopinline.c:"), lp["name"]
kern = [k for k in kids(lp) if k["kind"] == "inlined" and k["name"] == "kernel" and k["line"] == call]
assert kern, f"no kernel [inlined] at line {call} in the outer loop: {kids(lp)}"
inner = [k for k in kids(kern[0]) if k["kind"] == "loop" and k["line"] <= body <= k["line_end"]]
assert inner, f"no inner loop covering line {body}"
share = inner[0]["inclusive"][0] / total
print(f"outer {lp['name']} {lp['inclusive_pct'][0]:.1f}%, inner {inner[0]['name']} {100 * share:.1f}%")
assert share > 0.8, f"the inner loop holds only {share:.2f} of the time"
# a loop's exclusive value is its body's (inlined code included, calls excluded)
assert abs(lp["exclusive"][0] - lp["inclusive"][0]) <= 0.02 * lp["inclusive"][0], lp
PY
	fail "the top-down view lacks the loop nest"
report_json "$WORK/flat.json" "$WORK/m" --view flat --flatten 3 --depth 1
python3 - "$WORK/flat.json" "$(line outer-loop)" <<'PY' || fail "flat --flatten 3 does not rank the loop at the top"
import json, sys
d = json.load(open(sys.argv[1]))
outer = int(sys.argv[2])
top = [n for n in d["nodes"] if n["depth"] == 1]
assert all(n["parent"] == 0 for n in top) and d["flatten"] == 3
assert not [n for n in top if n["kind"] in ("module", "file")], top
loops = [n for n in top if n["kind"] == "loop" and n["line"] <= outer <= n["line_end"]]
assert loops, [n["name"] for n in top]
print("depth 1 after --flatten 3:", [n["name"] for n in top])
assert loops[0]["exclusive_pct"][0] > 80, loops[0]
assert loops[0]["procedure"] == "compute", loops[0]
PY
# The text view shows the loop and the inlined frame.
run "$CALLPATH" report "$WORK/m" --no-summary
grep -q "loop at loopinline.c:$(line outer-loop)-" "$WORK/run.out" || fail "text view lacks the outer loop"
grep -q "kernel \[inlined\]  loopinline.c:$(line inline-call)" "$WORK/run.out" ||
	fail "text view lacks the inlined kernel with its call site"
run "$CALLPATH" report "$WORK/m" --no-summary --view flat --flatten 3
grep -q "─ loop at loopinline.c:$(line outer-loop)-[0-9]*  in compute" "$WORK/run.out" ||
	fail "flat text with --flatten 3 lacks the loop"
note "ok"
