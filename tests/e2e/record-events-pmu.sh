#!/bin/bash
# Hardware counters (needs a PMU: skipped on VMs that expose none). -e cycles -e
# instructions on the 3:1 workload: two metrics in one group, cycles split about 3:1
# between heavy3 and light1, a plausible IPC, no multiplexing for two events.
source "$(dirname "$0")/lib.sh"
prog=$CP_WORKLOADS/chain.O2
require_built "$prog"
if [ ! -e /sys/bus/event_source/devices/cpu ] && [ ! -e /sys/bus/event_source/devices/cpu_core ]; then
	skip "no hardware performance counters here (/sys/bus/event_source/devices/cpu is missing: a VM?)"
fi
"$CALLPATH" record -q -e cycles -e instructions -o "$WORK/m" -- "$prog" 1000 >/dev/null 2>"$WORK/err" || {
	grep -q "perf_event_paranoid" "$WORK/err" && skip "perf events not permitted: $(cat "$WORK/err")"
	fail "record -e cycles -e instructions failed: $(cat "$WORK/err")"
}
"$CALLPATH" report "$WORK/m" --format json --threshold 0 >"$WORK/r.json" || fail "report failed"
python3 - "$WORK/r.json" <<'PY' || fail "hardware counters give the wrong shape"
import json, sys
d = json.load(open(sys.argv[1]))
names = [m["name"] for m in d["metrics"]]
assert names[:2] == ["cycles", "instructions"], names
incl = lambda fn, m: sum(n["inclusive"][m] for n in d["nodes"] if n["kind"] == "procedure" and n["name"] == fn)
r = incl("heavy3", 0) / max(incl("light1", 0), 1)
ipc = d["nodes"][0]["inclusive"][1] / max(d["nodes"][0]["inclusive"][0], 1)
print(f"cycles heavy3:light1 {r:.2f}, IPC {ipc:.2f}")
assert 2.4 <= r <= 3.6, r
assert 0.2 <= ipc <= 8, ipc
PY
python3 "$CP_SOURCE_DIR/tests/e2e/record-check.py" "$WORK/m" >"$WORK/c.json" || fail "invalid files"
json_assert "$WORK/c.json" 'all(m["source"] == 3 and m["mechanism"] == 4 for m in d["procs"][0]["metrics"])' "perf metrics"
json_assert "$WORK/c.json" 'not any("never counted" in n for n in d["procs"][0]["notes"])' "the group was counted"
grep -q "multiplexes" "$WORK/err" && note "two hardware events were multiplexed here (the PMU is shared?)"
note "ok"
