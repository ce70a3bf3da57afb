#!/bin/bash
# realtime samples blocked threads; the program's sleeps still last as long as asked
# (the workload checks itself) even though our timer interrupts them.
source "$(dirname "$0")/lib.sh"
CHECK="python3 $CP_SOURCE_DIR/tests/e2e/record-check.py"
prog=$CP_WORKLOADS/blocking.O2
require_built "$prog"
run "$CALLPATH" record -q -e realtime -e cputime -o "$WORK/m" -- "$prog" 300
grep -q "blocking done ok" "$WORK/run.out" || fail "program behaviour changed: $(cat "$WORK/run.out")"
$CHECK "$WORK/m" >"$WORK/m.json" || fail "measurement invalid"
python3 - "$WORK/m.json" <<'PY' || fail "realtime/cputime split wrong"
import json, sys
d = json.load(open(sys.argv[1]))
p = [p for p in d["procs"] if not p["flags"] & 8][0]
names = [m["name"] for m in p["metrics"]]
assert names == ["realtime", "cputime"], names
t = [t for t in d["threads"] if t["pid"] == p["pid"]][0]
wall = (t["end_ns"] - t["start_ns"]) / 1e9
real, cpu = t["totals"]  # ns attributed (timer overruns carry their time)
print("wall", wall, "realtime s", real / 1e9, "cputime s", cpu / 1e9, "samples", t["samples"],
      "cpu_ns", t["cpu_ns"], "dropped", t["dropped"])
# realtime covers the wall time (two 300 ms waits + compute), cputime only the compute.
assert 0.8 < real / 1e9 / wall < 1.2, (real, wall)
assert cpu < 0.8 * real, (cpu, real)
PY
# Without realtime the waits are not interrupted at all; the output is the same.
run "$CALLPATH" record -q -o "$WORK/c" -- "$prog" 100
grep -q "blocking done ok" "$WORK/run.out" || fail "behaviour changed under cputime"
exit 0
