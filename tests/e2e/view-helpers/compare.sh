# Sourced by tests/e2e/view-*.sh (after serve.sh): a whole view through the API, compared
# with `callpath report --format json`.

# view_fetch FILE VIEW EXTRA [STRICT]: every node of the view, walking /api/children from the
# root (EXTRA: more parameters, "&stat=max"). A 202 (the whole profile loading) is asked
# again, unless STRICT (1): then it fails (the view must be served without that load).
view_fetch() {
	python3 - "$VIEW_BASE" "$VIEW_TOKEN" "$2" "$3" "${4:-0}" >"$1" <<'PY' || fail "walking view $2 failed"
import json, sys, time, urllib.request
base, token, view, extra, strict = sys.argv[1:6]
def get(path):
    for _ in range(600):  # 202: the whole profile is loading
        req = urllib.request.Request(base + path, headers={"X-Callpath-Token": token})
        r = urllib.request.urlopen(req)
        if r.status != 202:
            return json.load(r)
        if strict == "1":
            raise SystemExit("202 (loading the whole profile): " + path)
        time.sleep(0.1)
    raise SystemExit("still loading after 60 s: " + path)
nodes, todo = [], ["0"]
while todo:
    nid = todo.pop()
    d = get("/api/children?view=%s&node=%s&limit=5000%s" % (view, nid, extra))
    if nid == "0":
        nodes.append(dict(d["node"], parent=None))
    assert d["total_children"] == len(d["children"]), (nid, d["total_children"])
    for c in d["children"]:
        nodes.append(dict(c, parent=nid))
        if c["has_children"]:
            todo.append(c["id"])
json.dump(nodes, sys.stdout)
PY
}

# view_compare API REPORT WHAT: the same nodes (by their chain of (kind, name, line) from the
# root) with the same inclusive and exclusive values of every metric.
view_compare() {
	python3 - "$1" "$2" <<'PY' || fail "$3: the API and report --format json differ"
import json, sys
api = json.load(open(sys.argv[1]))
rep = json.load(open(sys.argv[2]))
def keyed(nodes, pid, vals):
    by = {n["id"]: n for n in nodes}
    out = {}
    for n in nodes:
        chain, m = [], n
        while m is not None:
            chain.append((m["kind"], m["name"], m["line"] or 0))
            m = by.get(m[pid]) if m[pid] is not None else None
        out.setdefault(tuple(reversed(chain)), []).append(vals(n))
    return {k: sorted(v) for k, v in out.items()}
a = keyed(api, "parent", lambda n: (n["incl"], n["excl"]))
r = keyed(rep["nodes"], "parent", lambda n: (n["inclusive"], n["exclusive"]))
if "<total>" not in [k[0][1] for k in r]:
    r = {(("root", "<total>", 0),) + k[1:]: v for k, v in r.items()}
missing = set(r) ^ set(a)
assert not missing, sorted(missing)[:5]
def close(x, y):
    return (x is None and y is None) or abs(x - y) <= 1e-9 * max(1, abs(y))
for k in r:
    for (ai, ae), (ri, re) in zip(a[k], r[k]):
        assert all(map(close, ai, ri)) and all(map(close, ae, re)), (k, ai, ri, ae, re)
print(len(r), "nodes agree")
PY
}
