#!/bin/bash
# `callpath view`'s JSON API against `callpath report --format json` on the same measurement
# (threads.O2: several threads): every node of the top-down, bottom-up and flat views, a
# statistic over threads, one thread, a derived metric; and the other endpoints (node path,
# search, source, flame graph, sandwich, call graph, per-thread values, version) for their
# shape and their agreement with those views.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/report-helpers/record.sh"
. "$(dirname "$0")/view-helpers/serve.sh"
. "$(dirname "$0")/view-helpers/compare.sh"

report_record "$WORK/m" "$CP_WORKLOADS/threads.O2" 3
export CALLPATH_VIEW_TEST_GATE=$WORK/gate # the server's loads wait for this file
view_start "$WORK/m"

# the server never blocks on a load: while the whole profile loads (held by the gate), a
# request that needs it (the source pane of a statistic other than the sum) is answered 202
# "loading", the top-down, bottom-up and flat views (read from the database) and the front
# end at once
[ "$(vget "/api/source?file=0&stat=max")" = 202 ] || fail "source of max during the load: not 202"
grep -qi '^retry-after: 1' "$WORK/headers" || fail "the 202 has no Retry-After"
json_assert "$WORK/body" "d['loading'] is True" "the 202 body does not say loading"
expect_status 200 "/api/children?node=0"
[ "$(vget "/api/children?view=bu")" = 200 ] || fail "bottom-up (sum) during the load: not 200"
expect_status 200 "/"
[ "$(vget "/api/children?view=flat&stat=max")" = 200 ] || fail "flat max during the load: not 200"
[ "$(vget "/api/children?view=flat")" = 200 ] || fail "flat (sum) during the load: not 200"
"$CALLPATH" report "$WORK/m" --format json --threshold 0 -o /dev/null 2>/dev/null ||
	fail "report cannot read the measurement"

# the three views summed over threads, and the per-thread values of their rows, are read
# from the database: served during the load
for v in td:top-down bu:bottom-up flat:flat; do
	view_fetch "$WORK/api-${v%%:*}.json" "${v%%:*}" "" 1
	report_json "$WORK/rep-${v%%:*}.json" "$WORK/m" --view "${v##*:}" --threshold 0
	view_compare "$WORK/api-${v%%:*}.json" "$WORK/rep-${v%%:*}.json" "view ${v##*:}"
	view_rows_threads "$WORK/api-${v%%:*}.json" "${v##*:}" 1
done
# one thread: the worker with the most CPU time (the top-down view of one thread is read
# from the per-thread tables too: served during the load)
vjson "$WORK/threads.json" "/api/threads"
read -r prof pid tidx < <(python3 -c '
import json,sys; p=json.load(open(sys.argv[1]))["profiles"]
assert len(p) >= 3, p
print(p[1]["id"], p[1]["pid"], p[1]["tidx"])' "$WORK/threads.json")
view_fetch "$WORK/api-t.json" td "&thread=$prof" 1
report_json "$WORK/rep-t.json" "$WORK/m" --threshold 0 --thread "$pid:$tidx"
view_compare "$WORK/api-t.json" "$WORK/rep-t.json" "--thread $pid:$tidx"
# statistics over threads of the top-down view: the database's, and the <no line> leaves'
# from the per-thread tables (served during the load too)
for st in max stddev; do
	view_fetch "$WORK/api-t$st.json" td "&stat=$st" 1
	report_json "$WORK/rep-t$st.json" "$WORK/m" --threshold 0 --stat "$st"
	view_compare "$WORK/api-t$st.json" "$WORK/rep-t$st.json" "top-down --stat $st"
done
expect_status 404 "/api/children?thread=999"
expect_status 404 "/api/children?rank=7" # no MPI rank here

touch "$WORK/gate"
view_fetch "$WORK/api-max.json" bu "&stat=max"
report_json "$WORK/rep-max.json" "$WORK/m" --view bottom-up --threshold 0 --stat max
view_compare "$WORK/api-max.json" "$WORK/rep-max.json" "bottom-up --stat max"

view_fetch "$WORK/api-d.json" flat "&derived=half%3Dcputime/2"
report_json "$WORK/rep-d.json" "$WORK/m" --view flat --threshold 0 --metric "cputime,half=cputime/2"
view_compare "$WORK/api-d.json" "$WORK/rep-d.json" "derived half=cputime/2"

vjson "$WORK/metrics.json" "/api/metrics"
json_assert "$WORK/metrics.json" "d['metrics'][0]['total'] == json.load(open('$WORK/rep-td.json'))['metrics'][0]['total']" \
	"/api/metrics total differs from report's"

# the hottest worker procedure, its path, search, threads, sandwich, flame, call graph
read -r node proc name < <(python3 -c '
import json,sys; n=json.load(open(sys.argv[1]))
w=[x for x in n if x["kind"]=="procedure" and x["name"] not in ("main","_start") and x["id"]!="0"]
w=max((x for x in w if x["excl"][0]>0), key=lambda x: x["excl"][0])
print(w["id"], w["proc_id"], w["name"])' "$WORK/api-td.json")
vjson "$WORK/node.json" "/api/node?node=$node"
json_assert "$WORK/node.json" "d['path'][0]['id'] == '0' and d['path'][-1]['id'] == '$node' and d['node']['name'] == '$name'" \
	"/api/node: the path does not lead from the root to $node"
vjson "$WORK/search.json" "/api/search?q=%5E$name%24"
json_assert "$WORK/search.json" "any(m['id'] == '$node' and m['path'][0] == '0' and m['path'][-1] == '$node' for m in d['matches'])" \
	"/api/search did not find $name"
vjson "$WORK/tv.json" "/api/threads?node=$node"
python3 - "$WORK/tv.json" "$WORK/api-td.json" "$node" <<'PY' || fail "/api/threads values do not add up"
import json, sys
d = json.load(open(sys.argv[1]))
n = [x for x in json.load(open(sys.argv[2])) if x["id"] == sys.argv[3]][0]
vals = [v["incl"] for v in d["values"]]
assert abs(sum(vals) - n["incl"][0]) < 1e-6 * n["incl"][0], (sum(vals), n["incl"])
assert d["stats"]["incl"]["max"] == max(vals) and vals == sorted(vals, reverse=True)
assert d["stats"]["incl"]["count"] == sum(1 for v in vals if v)
PY

# per-thread values of the bottom-up rows of the max view (read from the database), from
# the whole profile: every thread's value is that row's in `report --view ... --thread`
view_rows_threads "$WORK/api-max.json" bottom-up
expect_status 404 "/api/threads?view=bu&node=b999999999" # a whole-profile id: loads it

vjson "$WORK/sw.json" "/api/sandwich?proc=$proc"
json_assert "$WORK/sw.json" "d['procedure']['name'] == '$name' and d['callers']['children'] and d['callees']['v'] > 0" \
	"/api/sandwich of $name has no callers"
vjson "$WORK/flame.json" "/api/flame?min=0"
python3 - "$WORK/flame.json" <<'PY' || fail "/api/flame: children exceed their parent"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["root"]["v"] == d["total"] > 0
def walk(t):
    assert sum(c["v"] for c in t["children"]) <= t["v"] * (1 + 1e-9), t["name"]
    for c in t["children"]: walk(c)
walk(d["root"])
PY
[ "$(vget_ready "/api/callgraph")" = 200 ] || fail "/api/callgraph failed"
grep -qi '^content-type: image/svg+xml' "$WORK/headers" || fail "the call graph is not SVG"
grep -q "<svg" "$WORK/body" && grep -q "id=\"p$proc\"" "$WORK/body" ||
	fail "the call graph has no box for $name (p$proc)"
# a second call graph (Graphviz's pango plugin read a freed font name from the second one on:
# ASan aborted the server)
[ "$(vget_ready "/api/callgraph?nodes=10")" = 200 ] || fail "a second /api/callgraph failed"

# source: the file with the most cost on its lines (common.h, where spin() is inlined): its
# per-line costs add up to its statements in the view
file=$(python3 -c '
import json,sys,collections; n=json.load(open(sys.argv[1])); c=collections.Counter()
for x in n:
    if x["kind"] == "line" and x["file_id"] is not None: c[x["file_id"]] += x["excl"][0]
print(c.most_common(1)[0][0])' "$WORK/api-td.json")
vjson "$WORK/src.json" "/api/source?file=$file"
python3 - "$WORK/src.json" "$WORK/api-td.json" "$file" <<'PY' || fail "/api/source costs are wrong"
import json, sys
d = json.load(open(sys.argv[1]))
nodes = json.load(open(sys.argv[2]))
f = int(sys.argv[3])
assert d["available"] and d["lines"], d.get("reason")
stmts = sum(n["excl"][0] for n in nodes if n["kind"] == "line" and n["file_id"] == f)
costs = sum(v[0] for v in d["costs"].values())
assert stmts > 0 and abs(costs - stmts) < 1e-6 * stmts, (costs, stmts)
hot = max(d["costs"], key=lambda k: d["costs"][k][0])
assert d["lines"][int(hot) - 1].strip(), "the hottest line is empty"
assert d["loops"] and any(int(hot) in range(l["line"], l["line_end"] + 1) for l in d["loops"])
assert int(hot) in d["inlined"], "spin() is inlined: its lines are marked"
PY
vjson "$WORK/version.json" "/api/version"
json_assert "$WORK/version.json" "d['generation'] == 0 and d['live'] is False" "/api/version"
note "every endpoint agrees"
