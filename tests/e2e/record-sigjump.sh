#!/bin/bash
# A program signal handler that siglongjmps cannot strand a sample half-taken: the
# sampling handler blocks other signals while it runs, so the program's SIGALRM handler
# (every 500 us, jumping out of whatever it interrupted) never runs inside it. Before,
# the first SIGALRM that landed inside a sample left the thread "busy" and every later
# sample was dropped.
source "$(dirname "$0")/lib.sh"
CHECK="python3 $CP_SOURCE_DIR/tests/e2e/record-check.py"
prog=$CP_WORKLOADS/sigjump.O2
require_built "$prog"
run "$CALLPATH" record -q -o "$WORK/m" -- "$prog" 1500
grep -q "sigjump: [0-9]* jumps" "$WORK/run.out" || fail "program output missing"
$CHECK "$WORK/m" >"$WORK/m.json" || fail "measurement invalid"
python3 - "$WORK/m.json" <<'PY' || fail "samples were lost after a siglongjmp"
import json, sys
d = json.load(open(sys.argv[1]))
t = d["threads"][0]
s, dr = t["samples"][0], t["dropped"]
print("samples", s, "dropped", dr, "cpu s", t["cpu_ns"] / 1e9)
# 1 kHz of the thread's own CPU time (1.5 s of it on an idle machine; a loaded one gives the
# program less): a stranded handler stops sampling after the first few ms.
cpu_ms = t["cpu_ns"] / 1e6
assert cpu_ms >= 100 and s >= 0.7 * cpu_ms, (s, cpu_ms)
assert dr <= max(5, s // 20), (s, dr)
PY
exit 0
