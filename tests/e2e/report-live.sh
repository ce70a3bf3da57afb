#!/bin/bash
# A measurement read while the program runs (live), and after it was killed with SIGKILL:
# the report shows the samples taken so far and warns that the program did not finish.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/report-helpers/record.sh"

require_built "$RUNTIME" "$CALLPATH" "$CP_WORKLOADS/chain.O2"
mkdir -p "$WORK/m"
CALLPATH_OUTPUT=$WORK/m CALLPATH_EVENTS=cputime LD_PRELOAD=$RUNTIME \
	"$CP_WORKLOADS/chain.O2" 1000000 >/dev/null 2>&1 &
pid=$!
for _ in $(seq 1 200); do
	ls "$WORK/m"/*.thr >/dev/null 2>&1 && break
	sleep 0.1
done
ls "$WORK/m"/*.thr >/dev/null 2>&1 || { kill -9 $pid; fail "the runtime wrote no measurement files in 20 s"; }
sleep 1
for i in 1 2 3; do
	"$CALLPATH" report "$WORK/m" --format json -o "$WORK/live$i.json" 2>"$WORK/err" || {
		kill -9 $pid
		fail "live report $i failed: $(cat "$WORK/err")"
	}
	sleep 0.3
done
kill -9 $pid
wait $pid 2>/dev/null
report_json "$WORK/killed.json" "$WORK/m"
python3 - "$WORK"/live1.json "$WORK"/live3.json "$WORK/killed.json" <<'PY' || fail "live/killed reports are wrong"
import json, sys
docs = [json.load(open(p)) for p in sys.argv[1:]]
totals = [d["nodes"][0]["inclusive"][0] for d in docs]
print("totals (live, live, killed):", totals)
assert 0 < totals[0] <= totals[1] <= totals[2], totals
w = docs[2]["summary"]["warnings"]
assert any("did not finish" in x for x in w), w
names = {n["name"] for n in docs[2]["nodes"]}
assert {"heavy3", "light1"} <= names, names
PY
note "ok"
