# Sourced by tests/e2e/view-*.sh (after serve.sh): a whole view through the API, compared
# with `callpath report --format json`.
VIEW_HELPERS=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd) # vapi.py

# view_fetch FILE VIEW EXTRA [STRICT]: every node of the view, walking /api/children from the
# root (EXTRA: more parameters, "&stat=max"). A 202 (the whole profile loading) is asked
# again, unless STRICT (1): then it fails (the view must be served without that load).
view_fetch() {
	python3 - "$VIEW_BASE" "$VIEW_TOKEN" "$2" "$3" "${4:-0}" "$VIEW_HELPERS" >"$1" <<'PY' || fail "walking view $2 failed"
import json, sys
base, token, view, extra, strict = sys.argv[1:6]
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, sys.argv[6])
import vapi
def get(path):
    return vapi.get(base, token, path, strict == "1")
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

# view_rows_threads VIEW-FILE REPORT-VIEW [STRICT]: /api/threads of some rows of a view
# fetched by view_fetch (the 3 heaviest, the heaviest of each kind, the deepest) against
# `report --view REPORT-VIEW --thread PID:TIDX` of the measurement $WORK/m: every thread's
# inclusive and exclusive value of the row is that row's in the thread's report. STRICT (1):
# a 202 fails (served from the database's per-thread tables, not the whole profile).
view_rows_threads() {
	local i pid tidx
	vjson "$WORK/rt-profiles.json" "/api/threads"
	python3 -c '
import json,sys
for p in json.load(open(sys.argv[1]))["profiles"]: print(p["id"], p["pid"], p["tidx"])' \
		"$WORK/rt-profiles.json" | while read -r i pid tidx; do
		report_json "$WORK/rt-$2-$i.json" "$WORK/m" --view "$2" --threshold 0 --thread "$pid:$tidx"
	done
	python3 - "$1" "$2" "$WORK" "$VIEW_BASE" "$VIEW_TOKEN" "${3:-0}" "$VIEW_HELPERS" <<'PY' || fail "/api/threads of $2 rows differ from report --thread"
import json, sys, urllib.parse
nodes, view, work, base, token, strict = sys.argv[1:7]
sys.dont_write_bytecode = True
sys.path.insert(0, sys.argv[7])
import vapi
nodes = json.load(open(nodes))
by = {n["id"]: n for n in nodes}
def chain(n, by, pid):
    c = []
    while n is not None:
        c.append((n["kind"], n["name"] if n[pid] is not None else "<total>", n["line"] or 0))
        n = by.get(n[pid]) if n[pid] is not None else None
    return tuple(reversed(c))
def get(path):
    return vapi.get(base, token, path, strict == "1")
profiles = get("/api/threads")["profiles"]
reps = {}
for p in profiles:
    r = json.load(open("%s/rt-%s-%d.json" % (work, view, p["id"])))
    rb = {n["id"]: n for n in r["nodes"]}
    reps[p["id"]] = {chain(n, rb, "parent"): (n["inclusive"][0], n["exclusive"][0]) for n in r["nodes"]}
rows = sorted((n for n in nodes if n["parent"] is not None), key=lambda n: -n["incl"][0])[:3]
for kind in sorted(set(n["kind"] for n in nodes) - {"root"}):  # and the heaviest of each kind
    rows.append(max((n for n in nodes if n["kind"] == kind), key=lambda n: n["incl"][0]))
deep = [n for n in nodes if n["parent"] is not None and n["incl"][0] > 0]
rows.append(max(deep, key=lambda n: (len(chain(n, by, "parent")), n["incl"][0])))
vp = {"bottom-up": "bu", "flat": "flat"}.get(view, "td")
nonzero = 0
for n in rows:
    d = get("/api/threads?view=%s&node=%s&metric=0" % (vp, urllib.parse.quote(n["id"])))
    assert len(d["values"]) == len(profiles), (n["id"], d)
    k = chain(n, by, "parent")
    k = (("root", "<total>", 0),) + k[1:]
    for v in d["values"]:
        want = next((val for kk, val in reps[v["profile"]].items() if kk[1:] == k[1:]), (0, 0))
        got = (v["incl"], v["excl"])
        assert all(abs(g - w) <= 1e-9 * max(1, abs(w)) for g, w in zip(got, want)), (n["id"], n["name"], v["profile"], got, want)
        nonzero += v["incl"] != 0
    assert abs(sum(v["incl"] for v in d["values"]) - n["incl"][0]) <= 1e-6 * n["incl"][0] or view == "bottom-up" and "max" in sys.argv[1]
assert nonzero >= min(2, len(profiles)), "too few threads with a value"
print(len(rows), view, "rows agree per thread:", " ".join("%s(%s %s)" % (n["id"], n["kind"], n["name"]) for n in rows))
PY
}
