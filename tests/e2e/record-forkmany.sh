#!/bin/bash
# Samples are not dropped around fork: a parent with a large heap spends most of its CPU
# in fork() (page-table copies), and that time is sampled like any other (it used to be
# dropped as "inside the runtime"). Every child gets its own FORK_CHILD process file.
source "$(dirname "$0")/lib.sh"
CHECK="python3 $CP_SOURCE_DIR/tests/e2e/record-check.py"
prog=$CP_WORKLOADS/forkmany.O2
require_built "$prog"
run "$CALLPATH" record -q -o "$WORK/m" -- "$prog" 40 128
grep -q "forkmany done 40" "$WORK/run.out" || fail "program output missing"
$CHECK "$WORK/m" >"$WORK/m.json" || fail "measurement invalid"
python3 - "$WORK/m.json" <<'PY' || fail "samples dropped around fork"
import json, sys
d = json.load(open(sys.argv[1]))
parents = [p for p in d["procs"] if not p["flags"] & 8]
children = [p for p in d["procs"] if p["flags"] & 8]
assert len(parents) == 1 and len(children) == 40, (len(parents), len(children))
assert all(c["ppid"] == parents[0]["pid"] for c in children)
t = [t for t in d["threads"] if t["pid"] == parents[0]["pid"]][0]
print("parent samples", t["samples"][0], "dropped", t["dropped"], "cpu s", t["cpu_ns"] / 1e9)
assert t["samples"][0] >= 50, t["samples"]
assert t["dropped"] <= max(2, t["samples"][0] // 50), t["dropped"]
PY
exit 0
