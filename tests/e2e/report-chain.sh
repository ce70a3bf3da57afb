#!/bin/bash
# chain.O2: run -> heavy3 (3 units) and light1 (1 unit): the report must show the path
# main -> run -> {heavy3, light1} with heavy3:light1 about 3:1.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/report-helpers/record.sh"

report_record "$WORK/m" "$CP_WORKLOADS/chain.O2" 2000
report_json "$WORK/td.json" "$WORK/m" --view top-down
python3 - "$WORK/td.json" <<'PY' || fail "chain profile has the wrong shape"
import json, sys
d = json.load(open(sys.argv[1]))
nodes = {n["id"]: n for n in d["nodes"]}
def path(n):
    p = []
    while n["parent"] is not None:
        if n["kind"] == "procedure":
            p.append(n["name"])
        n = nodes[n["parent"]]
    return p[::-1]
incl = {"heavy3": 0, "light1": 0}
for n in d["nodes"]:
    if n["kind"] == "procedure" and n["name"] in incl:
        p = path(n)
        assert p[-3:-1] == ["main", "run"], f"{n['name']} reached by {p}"
        incl[n["name"]] += n["inclusive"][0]
total = d["nodes"][0]["inclusive"][0]
ratio = incl["heavy3"] / max(incl["light1"], 1)
share = (incl["heavy3"] + incl["light1"]) / total
print(f"heavy3 {incl['heavy3']} light1 {incl['light1']} ratio {ratio:.2f} share {share:.3f}")
assert 2.4 <= ratio <= 3.6, f"ratio {ratio:.2f} outside 2.4..3.6"
assert share > 0.95, f"heavy3+light1 hold only {share:.3f} of the total"
s = d["summary"]
assert s["unwind"]["complete_pct"] > 99, s["unwind"]
PY
# Call sites and inlined frames point at the right source lines (found in chain.c itself).
python3 - "$WORK/td.json" "$CP_SOURCE_DIR/tests/workloads/chain.c" <<'PY' || fail "wrong call-site or inline lines"
import json, sys
d = json.load(open(sys.argv[1]))
src = open(sys.argv[2]).read().split("\n")
line_of = lambda text: next(i + 1 for i, l in enumerate(src) if text in l)
nodes = {n["id"]: n for n in d["nodes"]}
for name, call, inl in [("heavy3", "heavy3(100000)", "spin(3 * units"), ("light1", "light1(100000)", "spin(units, 1)")]:
    n = next(n for n in d["nodes"] if n["kind"] == "procedure" and n["name"] == name)
    assert n["file"].endswith("chain.c") and n["line"] == line_of(call), (name, n["file"], n["line"])
    kids = [k for k in d["nodes"] if k["parent"] == n["id"]]
    spin = [k for k in kids if k["kind"] == "inlined" and k["name"] == "spin"]
    assert spin and spin[0]["line"] == line_of(inl), (name, kids)
    print(f"{name}: called at chain.c:{n['line']}, spin inlined at chain.c:{spin[0]['line']}")
PY
# --hot-path: the path to heavy3 (3/4 of run's time) is expanded and marked, light1 is shown
# but not expanded; at 80% the path stops above heavy3.
report_json "$WORK/hot.json" "$WORK/m" --hot-path
report_json "$WORK/hot80.json" "$WORK/m" --hot-path=80
python3 - "$WORK/hot.json" "$WORK/hot80.json" <<'PY' || fail "--hot-path does not follow heavy3"
import json, sys
d, d80 = (json.load(open(p)) for p in sys.argv[1:3])
byname = lambda d, name: [n for n in d["nodes"] if n["kind"] == "procedure" and n["name"] == name]
assert d["hot_path"] == 50 and byname(d, "heavy3")[0]["hot"] and not byname(d, "light1")[0]["hot"]
light = byname(d, "light1")[0]["id"]
assert not [n for n in d["nodes"] if n["parent"] == light], "light1 was expanded"
hot = [n for n in d["nodes"] if n["hot"]]
assert hot[-1]["inclusive"][0] >= 0.5 * d["nodes"][[n["id"] for n in d["nodes"]].index(hot[-1]["parent"])]["inclusive"][0]
assert not byname(d80, "heavy3")[0]["hot"], "heavy3 keeps < 80% of run's time but is hot at 80%"
print("hot path:", " > ".join(n["name"] for n in hot))
PY
# The text view shows the same tree.
run "$CALLPATH" report "$WORK/m"
grep -q "heavy3  chain.c:" "$WORK/run.out" || fail "text view lacks heavy3 with its call site"
grep -q "delivered" "$WORK/run.out" || fail "summary lacks the delivered rate"
# `callpath record` ends with cp_report_print_summary(): the hottest procedures first.
if grep -q "hottest procedures" "$WORK/record.out" "$WORK/record.err" 2>/dev/null; then
	cat "$WORK/record.out" "$WORK/record.err" >"$WORK/summary.txt"
	first=$(grep -A2 "hottest procedures" "$WORK/summary.txt" | tail -1)
	case "$first" in *heavy3*) ;; *) fail "record summary's hottest procedure is not heavy3: $first" ;; esac
	grep -q "all below runs in: .*main" "$WORK/summary.txt" ||
		fail "record summary does not fold the start-up chain"
fi
note "ok"
