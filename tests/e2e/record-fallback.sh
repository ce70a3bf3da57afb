#!/bin/bash
# Without perf_event (CALLPATH_NO_PERF=1 forces it), cputime falls back to POSIX CPU-time
# timers: a NOTE says so, the delivered rate is measured and written, and the CPU time
# attributed (samples weighted by timer overruns) still matches the thread's CPU time.
source "$(dirname "$0")/lib.sh"
CHECK="python3 $CP_SOURCE_DIR/tests/e2e/record-check.py"
prog=$CP_WORKLOADS/chain.O2
require_built "$prog"
CALLPATH_NO_PERF=1 run "$CALLPATH" record -q -o "$WORK/m" -- "$prog"
$CHECK "$WORK/m" >"$WORK/m.json" || fail "measurement invalid"
python3 - "$WORK/m.json" <<'PY' || fail "fallback not reported correctly"
import json, re, sys
d = json.load(open(sys.argv[1]))
p, t = d["procs"][0], d["threads"][0]
assert p["metrics"][0]["mechanism"] == 2, p["metrics"]
notes = " | ".join(p["notes"])
assert "falling back to POSIX" in notes, notes
m = re.search(r"delivered (\d+) samples per CPU second", notes)
assert m, notes
rate = t["samples"][0] / (t["cpu_ns"] / 1e9)
print("noted rate", m.group(1), "computed", rate, "attributed", t["totals"][0] / t["cpu_ns"])
assert abs(int(m.group(1)) - rate) <= 0.05 * rate + 1
assert t["samples"][0] > 50
assert 0.8 < t["totals"][0] / t["cpu_ns"] < 1.2
PY
exit 0
