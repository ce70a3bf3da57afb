#!/bin/bash
# `callpath view` on the measurement directory of a program that is still running: the page
# is told it is live, and /api/version's generation moves on while the program adds
# samples, after which the totals have grown. Requests of every kind (the whole profile's
# loads among them) keep coming while the refreshes replace the model underneath: each is
# answered (200, or 202 while a load runs; a use-after-free aborts the server under ASan).
# When the server stops, its temporary databases are gone.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/view-helpers/serve.sh"

require_built "$CALLPATH" "$CP_WORKLOADS/chain.O2"
export TMPDIR=$WORK/tmp
mkdir -p "$TMPDIR"
"$CALLPATH" record -o "$WORK/m" -- "$CP_WORKLOADS/chain.O2" 4000 >"$WORK/rec.out" 2>&1 &
rec=$!
for _ in $(seq 100); do
	ls "$WORK"/m/*.proc >/dev/null 2>&1 && break
	sleep 0.1
done
sleep 1 # some samples first
view_start "$WORK/m"
trap 'kill $VIEW_PID $rec 2>/dev/null; wait $VIEW_PID $rec 2>/dev/null; rm -rf "$WORK"' EXIT
vjson "$WORK/info.json" /api/info
json_assert "$WORK/info.json" "d['live'] is True" "a running measurement is not live"
vjson "$WORK/m0.json" /api/metrics
python3 - "$VIEW_BASE" "$VIEW_TOKEN" "$WORK/stop" >"$WORK/hammer.out" 2>&1 <<'PY' &
import os, sys, urllib.error, urllib.request
base, token, stop = sys.argv[1:4]
paths = ["/api/children?view=bu", "/api/children?view=flat", "/api/children?node=0",
         "/api/children?view=bu&stat=max", "/api/threads?node=0", "/api/metrics"]
counts = {}
for i in range(2000):  # bounded; stops when the test has seen a refresh
    if os.path.exists(stop):
        break
    req = urllib.request.Request(base + paths[i % len(paths)], headers={"X-Callpath-Token": token})
    try:
        status = urllib.request.urlopen(req, timeout=30).status
    except urllib.error.HTTPError as e:
        status = e.code
    counts[status] = counts.get(status, 0) + 1
    assert status in (200, 202), (paths[i % len(paths)], status)
print("answers", counts)
PY
hammer=$!
gen=0
for _ in $(seq 40); do
	sleep 0.5
	vjson "$WORK/v.json" /api/version
	gen=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["generation"])' "$WORK/v.json")
	[ "$gen" -gt 0 ] && break
done
[ "$gen" -gt 0 ] || fail "the generation did not move while the program ran"
touch "$WORK/stop"
wait "$hammer" || fail "requests during the refreshes: $(cat "$WORK/hammer.out")"
note "$(cat "$WORK/hammer.out")"
vjson "$WORK/m1.json" /api/metrics
python3 - "$WORK/m0.json" "$WORK/m1.json" <<'PY' || fail "the totals did not grow"
import json, sys
a, b = (json.load(open(f))["metrics"][0]["total"] for f in sys.argv[1:3])
assert b > a > 0, (a, b)
print("total", a, "->", b)
PY
kill "$VIEW_PID"
wait "$VIEW_PID" 2>/dev/null
[ -z "$(ls -A "$TMPDIR")" ] || fail "temporary databases left behind: $(ls -R "$TMPDIR")"
kill "$rec" 2>/dev/null # no need to wait for the rest of the run
wait "$rec" 2>/dev/null
note "the live directory refreshed (generation $gen)"
