#!/bin/bash
# fork is followed through pthread_atfork. (1) No deadlock: the program's own atfork
# prepare handler takes a lock L that another thread holds while it dlopens; a profiler
# taking its module lock before the program's prepare handlers ran would wait for L
# forever. (2) A process made by a fork inside libc (daemon()) is profiled: its own
# FORK_CHILD file, with the samples of its work.
source "$(dirname "$0")/lib.sh"
CHECK="python3 $CP_SOURCE_DIR/tests/e2e/record-check.py"
prog=$CP_WORKLOADS/atfork.O2
require_built "$prog"
timeout 120 "$CALLPATH" record -q -o "$WORK/m" -- "$prog" 300 300000000 >"$WORK/out" 2>&1
rc=$?
[ $rc -eq 124 ] && { pkill -KILL -f "$prog 300" ; fail "deadlock: fork did not return within 120 s"; }
[ $rc -eq 0 ] || { cat "$WORK/out" >&2; fail "record failed ($rc)"; }
grep -q "atfork: 300 forks done" "$WORK/out" || fail "program output missing"
$CHECK "$WORK/m" >"$WORK/m.json" || fail "measurement invalid"
python3 - "$WORK/m.json" <<'PY' || fail "the daemon() grandchild was not profiled"
import json, sys
d = json.load(open(sys.argv[1]))
procs = {p["pid"]: p for p in d["procs"]}
grand = [p for p in d["procs"] if p["flags"] & 8 and p["ppid"] in procs
         and procs[p["ppid"]]["flags"] & 8]
assert len(grand) == 1, [(p["pid"], p["ppid"]) for p in grand]
t = [t for t in d["threads"] if t["pid"] == grand[0]["pid"]]
print("daemon samples", t[0]["samples"][0])
assert t and t[0]["samples"][0] >= 50, t
PY
exit 0
