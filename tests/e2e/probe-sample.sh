#!/bin/bash
# Probes and sampling in one run: samples taken inside probed functions unwind through
# the probes' return trampoline (the unwinder takes the real return address from the
# thread's shadow stack, matched by stack slot). Before, such samples came out on wrong,
# shortened paths (heavy3 directly below __libc_start_call_main, main and run skipped).
source "$(dirname "$0")/lib.sh"
prog=$CP_WORKLOADS/chain.O2
require_built "$prog"
run "$CALLPATH" probe -q -o "$WORK/m" -f heavy3 -f run -e cputime -- "$prog" 1500
run "$CALLPATH" report --format csv --metric cputime,calls "$WORK/m"
python3 - "$WORK/run.out" <<'PY' || fail "samples inside probed functions are on wrong paths"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
by = {r["id"]: r for r in rows}
def path(r):
    names = []
    while r:
        names.append(r["name"])
        r = by.get(r["parent"])
    return names[::-1]
total = float(rows[0]["cputime_inclusive"])
heavy = [r for r in rows if r["name"] == "heavy3" and r["kind"] == "procedure"]
good = sum(float(r["cputime_inclusive"]) for r in heavy if {"main", "run"} <= set(path(r)))
allh = sum(float(r["cputime_inclusive"]) for r in heavy)
calls = sum(float(r["calls_inclusive"]) for r in heavy)
print(f"heavy3: {allh / total:.1%} of cputime, {good / allh:.1%} of it under main > run; calls {calls:.0f}")
assert 0.6 < allh / total < 0.9, allh / total
assert good >= 0.98 * allh, (good, allh)
assert calls > 0
PY
python3 "$CP_SOURCE_DIR/tests/e2e/record-check.py" "$WORK/m" >"$WORK/m.json" || fail "measurement invalid"
json_assert "$WORK/m.json" 'd["threads"][0]["partial"] <= max(2, d["threads"][0]["complete"] // 100)' \
	"more than 1% partial unwinds"
note "ok"
