#!/bin/bash
# recurse.O2: descend() recurses 200 deep. A procedure's inclusive value counts each sample
# once however often it is on the path: descend's inclusive <= 100% in the bottom-up and flat
# views, though it appears ~200 times on every path.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/report-helpers/record.sh"

report_record "$WORK/m" "$CP_WORKLOADS/recurse.O2" 200 200
for view in bottom-up flat; do
	report_json "$WORK/$view.json" "$WORK/m" --view $view
	python3 - "$WORK/$view.json" "$view" <<'PY' || fail "$view: recursion counted twice"
import json, sys
d = json.load(open(sys.argv[1]))
total = d["nodes"][0]["inclusive"][0]
desc = [n for n in d["nodes"] if n["kind"] == "procedure" and n["name"] == "descend"]
assert desc, "no descend node"
for n in desc:
    pct = n["inclusive_pct"][0]
    print(f"{sys.argv[2]}: descend inclusive {pct:.2f}% exclusive {n['exclusive_pct'][0]:.2f}%")
    assert n["inclusive"][0] <= total, (n["inclusive"][0], total)
    assert pct > 90, f"descend holds only {pct}%"
    assert n["exclusive"][0] <= n["inclusive"][0]
PY
done
# The top-down view keeps the recursion: descend under descend, many levels deep.
report_json "$WORK/td.json" "$WORK/m" --view top-down
python3 - "$WORK/td.json" <<'PY' || fail "top-down view lost the recursion"
import json, sys
d = json.load(open(sys.argv[1]))
nodes = {n["id"]: n for n in d["nodes"]}
deep = 0
for n in d["nodes"]:
    if n["name"] == "descend":
        k, m = 0, n
        while m["parent"] is not None:
            k += m["name"] == "descend"
            m = nodes[m["parent"]]
        deep = max(deep, k)
print("deepest descend chain:", deep)
assert deep >= 150, deep
PY
note "ok"
