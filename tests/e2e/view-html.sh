#!/bin/bash
# `callpath view --html`: one self-contained file. Its bundle (the JSON in the page) holds the
# three views with the values of report --format json, parents before children; the page
# refers to nothing outside itself (no src/href to another file or host; a CSP that allows
# no connection); "</" cannot end the inline scripts early; --html-nodes bounds the nodes.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/report-helpers/record.sh"

report_record "$WORK/m" "$CP_WORKLOADS/loopinline.O2" 300
run "$CALLPATH" view --html "$WORK/p.html" "$WORK/m"
report_json "$WORK/td.json" "$WORK/m" --threshold 0
report_json "$WORK/bu.json" "$WORK/m" --threshold 0 --view bottom-up
python3 - "$WORK/p.html" "$WORK/td.json" "$WORK/bu.json" <<'PY' || fail "the bundle is wrong"
import json, re, sys
page = open(sys.argv[1]).read()
scripts = re.findall(r"<script([^>]*)>(.*?)</script>", page, re.S)
assert all("src=" not in a for a, _ in scripts), "a script is not inline"
assert not re.search(r"""(src|href)=["']?(https?:|//|[a-z0-9_-]+\.(js|css))""", page, re.I), \
    "the page refers to another file"
csp = re.search(r'http-equiv="Content-Security-Policy" content="([^"]*)"', page).group(1)
assert "default-src 'none'" in csp and "connect-src" not in csp, csp
bundle = [b for a, b in scripts if 'id="callpath-bundle"' in a]
assert len(bundle) == 1, "no bundle"
assert "<" not in bundle[0], "a '<' in the bundle could end its script"
d = json.loads(bundle[0])
assert d["format"] == "callpath-view-bundle" and d["version"] == 1 and d["info"]["static"]
td, bu = json.load(open(sys.argv[2])), json.load(open(sys.argv[3]))
for view, rep in (("td", td), ("bu", bu)):
    nodes = d["views"][view]["nodes"]
    seen = set()
    for n in nodes:
        assert n["parent"] is None or n["parent"] in seen, "a child before its parent"
        seen.add(n["id"])
    assert nodes[0]["incl"][0] == rep["metrics"][0]["total"], view
    got = sorted(round(n["incl"][0]) for n in nodes)
    want = sorted(round(n["inclusive"][0]) for n in rep["nodes"])
    assert got == want, (view, got[-5:], want[-5:])
resp = d["responses"]
assert resp["/api/callgraph"].startswith("<?xml") and "<svg" in resp["/api/callgraph"]
assert any(k.startswith("/api/source?file=") and v["available"] for k, v in resp.items()), \
    "no source of the workload"
print(len(d["views"]["td"]["nodes"]), "top-down nodes in the bundle")
PY
# a budget: the largest nodes are kept, the file says it was cut
run "$CALLPATH" view --html "$WORK/small.html" --html-nodes 5 "$WORK/m"
python3 - "$WORK/small.html" "$WORK/td.json" <<'PY' || fail "--html-nodes 5 is wrong"
import json, re, sys
page = open(sys.argv[1]).read()
d = json.loads(re.search(r'<script id="callpath-bundle" type="application/json">(.*?)</script>',
                         page, re.S).group(1))
td = d["views"]["td"]
assert len(td["nodes"]) == 5 and td["truncated"], len(td["nodes"])
rep = sorted((n["inclusive"][0] for n in json.load(open(sys.argv[2]))["nodes"]), reverse=True)
assert sorted((n["incl"][0] for n in td["nodes"]), reverse=True) == rep[:5]
assert not any(n["has_children"] for n in td["nodes"] if not any(
    m["parent"] == n["id"] for m in td["nodes"])), "has_children on a node whose children are out"
PY
"$CALLPATH" view --html "$WORK/x.html" "$WORK/nosuch" 2>"$WORK/err" && fail "a missing profile is accepted"
note "the self-contained file holds the views and refers to nothing else"
