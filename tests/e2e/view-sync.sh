#!/bin/bash
# `callpath view`'s GET /api/sync (waits by synchronization object, from the database's
# sync_object table) against `callpath report --view sync --format json` on the same run
# (tests/workloads/syncobj.c under -e wait: mutexes, a barrier, joined threads): the same
# objects in the same order with the same names, kinds, wait times, waits and top call
# sites; `limit` keeps the heaviest; a database without the table says present false. The
# front end has the pane.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/view-helpers/serve.sh"

run "$CALLPATH" record -q -e wait -o "$WORK/m" -- "$CP_WORKLOADS/syncobj.O2"
run "$CALLPATH" analyze -q "$WORK/m" -o "$WORK/w.db"
run "$CALLPATH" report "$WORK/w.db" --view sync --format json
cp "$WORK/run.out" "$WORK/rep.json"
view_start "$WORK/w.db"
vjson "$WORK/api.json" "/api/sync"
python3 - "$WORK/api.json" "$WORK/rep.json" <<'PY' || fail "/api/sync differs from report --view sync"
import json, sys
api, rep = (json.load(open(f)) for f in sys.argv[1:3])
assert api["present"] is True and api["total"] == rep["objects_total"] >= 6, (api["total"], rep["objects_total"])
assert api["wait_ns"] == rep["wait_ns"] and api["waits"] == rep["waits"]
assert len(api["objects"]) == len(rep["objects"])
for a, r in zip(api["objects"], rep["objects"]):
    for k in ("pid", "rank", "kind", "name", "wait_ns", "waits", "peer", "tag"):
        assert a[k] == r[k], (k, a, r)
    assert abs(a["share"] - r["share"]) < 1e-6, (a, r)
    assert a["site"] == r["sites"][0]["site"] and a["site_wait_ns"] == r["sites"][0]["wait_ns"], (a, r)
    assert a["sites"] == len(r["sites"]), (a, r)
assert any(o["name"].startswith("lock_b ") and o["kind"] == "mutex" for o in api["objects"][:1]), api["objects"][0]
PY
vjson "$WORK/api2.json" "/api/sync?limit=2"
json_assert "$WORK/api2.json" "(len(d['objects']) == 2 and d['total'] >= 6 and
    [o['name'] for o in d['objects']] == [o['name'] for o in json.load(open('$WORK/api.json'))['objects'][:2]])" \
	"limit=2: $(cat "$WORK/api2.json")"
expect_status 200 "/"
grep -q 'data-pane="sync"' "$WORK/body" || fail "the front end has no sync objects pane"
expect_status 200 "/sync.js"
kill "$VIEW_PID" && wait "$VIEW_PID" 2>/dev/null

# a run without -e wait: no table
run "$CALLPATH" record -q -o "$WORK/n" -- "$CP_WORKLOADS/syncobj.O2"
run "$CALLPATH" analyze -q "$WORK/n" -o "$WORK/n.db"
view_start "$WORK/n.db"
vjson "$WORK/none.json" "/api/sync"
json_assert "$WORK/none.json" "d['present'] is False and d['objects'] == [] and d['total'] == 0" \
	"no waits: $(cat "$WORK/none.json")"
note "ok"
