#!/bin/bash
# Every thread gets its own finished thread file with its own samples; the 3:1 weight of
# thread 0 shows in the per-thread sample counts.
source "$(dirname "$0")/lib.sh"
CHECK="python3 $CP_SOURCE_DIR/tests/e2e/record-check.py"
prog=$CP_WORKLOADS/threads.O2
require_built "$prog"
run "$CALLPATH" record -q -o "$WORK/m" -- "$prog" 4
grep -q "threads done" "$WORK/run.out" || fail "program output missing"
$CHECK "$WORK/m" >"$WORK/m.json" || fail "measurement invalid"
json_assert "$WORK/m.json" 'len(d["threads"]) == 5' "5 thread files (main + 4 workers)"
json_assert "$WORK/m.json" 'd["procs"][0]["nthreads"] == 5' "process header counts 5 threads"
json_assert "$WORK/m.json" 'all(t["flags"] & 1 for t in d["threads"])' "all thread files FINISHED"
json_assert "$WORK/m.json" 'len({t["tid"] for t in d["threads"]}) == 5' "distinct tids"
python3 - "$WORK/m.json" <<'PY' || fail "per-thread work split not 3:1:1:1"
import json, sys
d = json.load(open(sys.argv[1]))
w = sorted((t["samples"][0] for t in d["threads"] if t["tidx"] != 0), reverse=True)
print("worker samples", w)
assert w[-1] > 50, w
assert 2.0 < w[0] / (sum(w[1:]) / 3) < 5.0, w  # 3.96 seen: fixed work, but 4 threads on 2 shared cores (co-running threads run slower per unit of work)
for t in d["threads"]:
    if t["samples"][0]:
        assert t["complete"] >= 0.99 * t["samples"][0], t
PY
exit 0
