#!/bin/bash
# The JSON output of every view carries the documented fields (docs/report-json.md), CSV has
# one row per JSON node, and the options change what is shown.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/report-helpers/record.sh"

report_record "$WORK/m" "$CP_WORKLOADS/chain.O2" 1000
for view in top-down bottom-up flat; do
	report_json "$WORK/$view.json" "$WORK/m" --view $view
	python3 - "$WORK/$view.json" "$view" <<'PY' || fail "$view: JSON schema"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["version"] == 2
assert d["view"] == sys.argv[2]
nm = len(d["metrics"])
assert nm >= 1 and all({"name", "unit", "kind", "formula"} <= set(m) for m in d["metrics"])
for k in ["metric", "shown", "stat", "sort", "sort_metric", "threshold", "depth", "flatten", "hot_path", "focus"]:
    assert k in d, k
assert d["stat"] == "sum" and d["hot_path"] is None and d["shown"] == [d["metric"]]
for k in ["command", "processes", "threads", "unwind", "notes", "warnings", "duration_s"]:
    assert k in d["summary"], k
seen = set()
kinds = {"root", "procedure", "inlined", "line", "partial", "module", "file", "caller", "loop"}
for n in d["nodes"]:
    for k in ["id", "parent", "kind", "name", "module", "file", "line", "inclusive", "exclusive"]:
        assert k in n, (k, n)
    assert n["kind"] in kinds, n["kind"]
    assert n["kind"] != "loop" or n["line_end"] >= n["line"] > 0, n
    assert len(n["inclusive"]) == nm and len(n["exclusive"]) == nm
    assert n["parent"] is None or n["parent"] in seen, "parent listed after child"
    assert n["exclusive"][0] <= n["inclusive"][0] or n["kind"] == "root"
    seen.add(n["id"])
total = d["nodes"][0]["inclusive"][0]
assert total > 0
assert all(n["inclusive"][0] <= total for n in d["nodes"])
PY
	run "$CALLPATH" report "$WORK/m" --view $view --format csv
	rows=$(($(wc -l <"$WORK/run.out") - 1))
	nodes=$(python3 -c "import json,sys; print(len(json.load(open(sys.argv[1]))['nodes']))" "$WORK/$view.json")
	[ "$rows" = "$nodes" ] || fail "$view: CSV has $rows rows, JSON $nodes nodes"
done
# Threshold, depth, focus, thread selection and -o.
report_json "$WORK/d1.json" "$WORK/m" --depth 1
json_assert "$WORK/d1.json" 'max(n["depth"] for n in d["nodes"]) == 1' "--depth 1 shows deeper rows"
report_json "$WORK/f.json" "$WORK/m" --focus heavy3
json_assert "$WORK/f.json" 'd["nodes"][1]["name"] == "heavy3" and d["nodes"][1]["parent"] == 0' \
	"--focus heavy3 does not root the view at heavy3"
report_json "$WORK/t.json" "$WORK/m" --threshold 50
json_assert "$WORK/t.json" 'all(n["inclusive_pct"][0] >= 50 for n in d["nodes"])' \
	"--threshold 50 shows smaller nodes"
report_json "$WORK/th.json" "$WORK/m" --thread 0
json_assert "$WORK/th.json" 'd["summary"]["threads"] == 1' "--thread 0 selects one thread"
"$CALLPATH" report "$WORK/m" --thread 99 >/dev/null 2>"$WORK/err" && fail "--thread 99 accepted"
grep -q "no thread 99" "$WORK/err" || fail "unclear message for --thread 99: $(cat "$WORK/err")"
"$CALLPATH" report "$WORK/m" --view sideways >/dev/null 2>&1 && fail "--view sideways accepted"
"$CALLPATH" report "$WORK/m" --metric nosuch >/dev/null 2>"$WORK/err" && fail "--metric nosuch accepted"
grep -q "cputime" "$WORK/err" || fail "--metric error does not list the metrics"
note "ok"
