#!/bin/bash
# The bottom-up and flat views read lazily from the database (src/view/model-bu.c,
# model-flat.c), never the whole profile in memory: on a recursive program (recurse.O2:
# descend() calls itself 30 deep, so a procedure's frames nest), a program with several
# callers per procedure (callers.O2) and one with loops in inlined code (loopinline.O2),
# every node of both views (and of one thread's, and of a statistic's) equals `callpath
# report --format json`'s, and so do the
# per-thread values of their rows (/api/threads), with the whole profile's load held back
# (a request that needed it would be answered 202 for ever), ids are unique and /api/node
# leads back to each node.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/report-helpers/record.sh"
. "$(dirname "$0")/view-helpers/serve.sh"
. "$(dirname "$0")/view-helpers/compare.sh"

export CALLPATH_VIEW_TEST_GATE=$WORK/gate # never created: the whole profile never loads
for w in "recurse.O2 200 30" "callers.O2 40000" "loopinline.O2 800"; do
	set -- $w
	report_record "$WORK/m" "$CP_WORKLOADS/$@"
	view_start "$WORK/m"
	[ "$(vget "/api/children?view=bu")" = 200 ] || fail "$1: bottom-up not served at once"
	view_fetch "$WORK/api.json" bu "" 1
	report_json "$WORK/rep.json" "$WORK/m" --view bottom-up --threshold 0
	view_compare "$WORK/api.json" "$WORK/rep.json" "$1: bottom-up"
	[ "$(vget "/api/children?view=flat")" = 200 ] || fail "$1: flat not served at once"
	view_fetch "$WORK/api-flat.json" flat "" 1
	report_json "$WORK/rep-flat.json" "$WORK/m" --view flat --threshold 0
	view_compare "$WORK/api-flat.json" "$WORK/rep-flat.json" "$1: flat"
	# one thread and a statistic, from the per-thread tables (recursion, loops in inlined
	# code: the items of a procedure's frames with each profile's values)
	read -r pid tidx < <(vjson "$WORK/pr.json" /api/threads && python3 -c '
import json,sys; p=json.load(open(sys.argv[1]))["profiles"][0]; print(p["pid"], p["tidx"])' "$WORK/pr.json")
	for v in flat:flat bu:bottom-up; do
		view_fetch "$WORK/api-s.json" "${v%%:*}" "&thread=0" 1
		report_json "$WORK/rep-s.json" "$WORK/m" --view "${v##*:}" --threshold 0 --thread "$pid:$tidx"
		view_compare "$WORK/api-s.json" "$WORK/rep-s.json" "$1: ${v##*:} --thread $pid:$tidx"
		view_fetch "$WORK/api-s.json" "${v%%:*}" "&stat=mean" 1
		report_json "$WORK/rep-s.json" "$WORK/m" --view "${v##*:}" --threshold 0 --stat mean
		view_compare "$WORK/api-s.json" "$WORK/rep-s.json" "$1: ${v##*:} --stat mean"
	done
	python3 - "$WORK/api-flat.json" <<'PY' || fail "$1: flat ids"
import json, sys
n = json.load(open(sys.argv[1]))
ids = [x["id"] for x in n]
assert len(ids) == len(set(ids)), "duplicate ids"
assert all(i == "0" or (i.startswith("f") and "." in i) for i in ids), ids[:5]
kinds = {x["kind"] for x in n}
assert {"module", "file", "procedure", "line"} <= kinds, kinds
parents = {x["parent"] for x in n}
empty = [x["id"] for x in n if x["has_children"] and x["id"] not in parents]
assert not empty, ("has_children but no children", empty[:5])
PY
	# /api/node of the deepest flat row
	deepf=$(python3 -c '
import json,sys; n=json.load(open(sys.argv[1])); by={x["id"]:x for x in n}
def depth(x): return 0 if x["parent"] is None else 1 + depth(by[x["parent"]])
print(max(n, key=depth)["id"])' "$WORK/api-flat.json")
	vjson "$WORK/nodef.json" "/api/node?view=flat&node=$deepf"
	json_assert "$WORK/nodef.json" "d['path'][0]['id'] == '0' and d['path'][-1]['id'] == '$deepf' and len(d['path']) >= 4" \
		"$1: /api/node of flat row $deepf"
	python3 - "$WORK/api.json" "$1" <<'PY' || fail "$1: bottom-up ids"
import json, sys
n = json.load(open(sys.argv[1]))
ids = [x["id"] for x in n]
assert len(ids) == len(set(ids)), "duplicate ids"
assert all(i == "0" or (i.startswith("b") and "." in i) for i in ids), ids[:5]
if sys.argv[2] == "recurse.O2":
    d = [x for x in n if x["name"] == "descend" and x["parent"] == "0"][0]
    root = n[0]
    # recursion counted once: descend's inclusive value is at most the total
    assert 0 < d["incl"][0] <= root["incl"][0], (d, root)
    assert any(x["kind"] == "caller" and x["name"] == "descend" for x in n)
PY
	# /api/node of the deepest node: its path of ancestors, root first
	deep=$(python3 -c '
import json,sys; n=json.load(open(sys.argv[1])); by={x["id"]:x for x in n}
def depth(x): return 0 if x["parent"] is None else 1 + depth(by[x["parent"]])
print(max(n, key=depth)["id"])' "$WORK/api.json")
	vjson "$WORK/node.json" "/api/node?view=bu&node=$deep"
	python3 - "$WORK/node.json" "$WORK/api.json" "$deep" <<'PY' || fail "$1: /api/node of $deep"
import json, sys
d = json.load(open(sys.argv[1]))
by = {x["id"]: x for x in json.load(open(sys.argv[2]))}
chain, x = [], by[sys.argv[3]]
while x is not None:
    chain.append(x["id"])
    x = by.get(x["parent"]) if x["parent"] else None
assert [p["id"] for p in d["path"]] == list(reversed(chain)), (d["path"], chain)
assert d["node"]["incl"] == by[sys.argv[3]]["incl"]
PY
	# per-thread values of bottom-up and flat rows, from the per-thread tables
	view_rows_threads "$WORK/api.json" bottom-up 1
	view_rows_threads "$WORK/api-flat.json" flat 1
	[ "$(vget "/api/threads?view=bu&node=${deep%%.*}.999")" = 404 ] ||
		fail "$1: /api/threads of an unknown bottom-up row: not 404"
	expect_status 404 "/api/children?view=bu&node=${deep%%.*}.999"
	expect_status 404 "/api/children?view=bu&node=${deep%%.*}"
	kill "$VIEW_PID"
	wait "$VIEW_PID" 2>/dev/null
done
note "bottom-up and flat served from the database equal report's"
