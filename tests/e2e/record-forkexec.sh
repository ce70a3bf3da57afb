#!/bin/bash
# fork: the child gets its own process file (flag FORK_CHILD); exec: the new image is
# followed (a third process file, same pid, next gen; the old one flagged EXEC_ENDED) unless
# --no-follow-exec. Neither writes a NOTE.
source "$(dirname "$0")/lib.sh"
CHECK="python3 $CP_SOURCE_DIR/tests/e2e/record-check.py"
prog=$CP_WORKLOADS/forkexec.O2
require_built "$prog"
run "$CALLPATH" record -q -o "$WORK/m" -- "$prog" "$CP_WORKLOADS/chain.O2"
grep -q "chain done" "$WORK/run.out" || fail "exec'd program did not run"
$CHECK "$WORK/m" >"$WORK/m.json" || fail "measurement invalid"
python3 - "$WORK/m.json" <<'PY' || fail "fork/exec files wrong"
import json, sys
d = json.load(open(sys.argv[1]))
procs = {(p["pid"], p["gen"]): p for p in d["procs"]}
assert len(procs) == 3, list(procs)
parent = [p for p in d["procs"] if p["exe"].endswith("forkexec.O2") and p["gen"] == 0 and
          not p["flags"] & 8]
child = [p for p in d["procs"] if p["flags"] & 8]
exe = [p for p in d["procs"] if p["exe"].endswith("chain.O2")]
assert len(parent) == 1 and len(child) == 1 and len(exe) == 1, d["procs"]
assert child[0]["ppid"] == parent[0]["pid"]
assert exe[0]["pid"] == child[0]["pid"] and exe[0]["gen"] == child[0]["gen"] + 1
# Relations are header flags (8 FORK_CHILD, 16 EXEC_ENDED), not routine NOTE records.
assert child[0]["flags"] & 16 and not parent[0]["flags"] & 16 and not exe[0]["flags"] & 24
assert not any("fork" in n or "exec" in n for p in d["procs"] for n in p["notes"]), \
    [p["notes"] for p in d["procs"]]
assert all(p["flags"] & 1 for p in d["procs"])
for p in d["procs"]:
    ts = [t for t in d["threads"] if t["pid"] == p["pid"] and t["gen"] == p["gen"]]
    assert len(ts) == 1 and ts[0]["samples"][0] > 100, (p["file"], ts)
    assert ts[0]["complete"] >= 0.99 * ts[0]["samples"][0]
PY
run "$CALLPATH" record -q --no-follow-exec -o "$WORK/n" -- "$prog" "$CP_WORKLOADS/chain.O2"
grep -q "chain done" "$WORK/run.out" || fail "exec'd program did not run (no-follow)"
$CHECK "$WORK/n" >"$WORK/n.json" || fail "no-follow measurement invalid"
json_assert "$WORK/n.json" 'len(d["procs"]) == 2 and not any(p["exe"].endswith("chain.O2") for p in d["procs"])' \
	"--no-follow-exec: exec'd image not profiled"

# A program that clears its environment before exec (env -i) is still followed.
run "$CALLPATH" record -q -o "$WORK/e" -- env -i "$CP_WORKLOADS/chain.O2"
grep -q "chain done" "$WORK/run.out" || fail "env -i: program did not run"
$CHECK "$WORK/e" >"$WORK/e.json" || fail "env -i measurement invalid"
json_assert "$WORK/e.json" 'any(p["exe"].endswith("chain.O2") for p in d["procs"])' \
	"image exec'd with an empty environment not followed"
exit 0
