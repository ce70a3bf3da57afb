#!/bin/bash
# -e cpu-clock (perf_event overflow sampling, software clock) agrees with -e cputime on the
# 3:1 workload (chain: run -> heavy3, light1), delivers the asked rate, and its weights add
# up to the thread's CPU time. Frequency mode (cpu-clock@f2000) delivers about 2000 samples
# per CPU second with weights that still sum to the CPU time. 250 us periods: ~2200
# samples, so that the ratios' sampling noise (~0.15) stays well inside the tolerances.
source "$(dirname "$0")/lib.sh"
CHECK="python3 $CP_SOURCE_DIR/tests/e2e/record-check.py"
prog=$CP_WORKLOADS/chain.O2
require_built "$prog"
run "$CALLPATH" record -q -e cpu-clock@250us -o "$WORK/pc" -- "$prog" 1000
run "$CALLPATH" record -q -e cputime@250us -o "$WORK/ct" -- "$prog" 1000
run "$CALLPATH" record -q -e cpu-clock@f2000 -o "$WORK/pf" -- "$prog" 1000
for m in pc ct pf; do
	"$CALLPATH" report "$WORK/$m" --format json --threshold 0 >"$WORK/$m.json" 2>"$WORK/err" ||
		fail "report $m failed: $(cat "$WORK/err")"
	$CHECK "$WORK/$m" >"$WORK/$m.c.json" || fail "$m: measurement files invalid"
done
python3 - "$WORK/pc.json" "$WORK/ct.json" "$WORK/pf.json" <<'PY' || fail "cpu-clock and cputime disagree"
import json, sys
def ratio(path):
    d = json.load(open(path))
    incl = lambda fn: sum(n["inclusive"][0] for n in d["nodes"] if n["kind"] == "procedure" and n["name"] == fn)
    return incl("heavy3") / max(incl("light1"), 1), d["metrics"][0]["name"]
rp, np_ = ratio(sys.argv[1]); rc, nc = ratio(sys.argv[2]); rf, nf = ratio(sys.argv[3])
print(f"heavy3:light1 {np_} {rp:.2f}, {nc} {rc:.2f}, {nf}@f2000 {rf:.2f}")
assert np_ == "cpu-clock" and nc == "cputime" and nf == "cpu-clock", (np_, nc, nf)
for r in (rp, rc, rf):
    assert 2.4 <= r <= 3.6, f"ratio {r:.2f} outside 2.4..3.6"
assert abs(rp - rc) <= 0.25 * rc, f"cpu-clock {rp:.2f} vs cputime {rc:.2f}"
PY
# The asked rate, and weights that sum to the CPU time (period mode and frequency mode).
t='d["threads"][0]'
json_assert "$WORK/pc.c.json" "0.8 < $t[\"samples\"][0] / ($t[\"cpu_ns\"] / 1e9) / 4000 < 1.2" \
	"cpu-clock@250us: 4000 samples per CPU second +-20%"
json_assert "$WORK/pc.c.json" "0.9 < $t[\"totals\"][0] / $t[\"cpu_ns\"] < 1.1" "cpu-clock weights sum to the CPU time"
json_assert "$WORK/pf.c.json" "0.6 < $t[\"samples\"][0] / ($t[\"cpu_ns\"] / 1e9) / 2000 < 1.4" \
	"cpu-clock@f2000: about 2000 samples per CPU second"
# In frequency mode the kernel may throttle the event when its interrupts come too fast for
# a loaded machine, and restarting a throttled cpu-clock drops the time it was stopped
# (cpu_clock_event_start resets its reference): weights are counter deltas and carry
# everything the kernel counted, but under heavy load they fall a little short of the
# thread's CPU time. Quiet machine: 0.999-1.0005.
python3 - "$WORK/pf.c.json" <<'PY' || fail "frequency-mode weights sum to the CPU time"
import json, sys
t = json.load(open(sys.argv[1]))["threads"][0]
r = t["totals"][0] / t["cpu_ns"]
print(f"cpu-clock@f2000: weights / CPU time = {r:.4f} ({t['samples'][0]} samples)")
assert 0.8 < r < 1.1, r
PY
json_assert "$WORK/pf.c.json" 'd["procs"][0]["metrics"][0]["period"] == 0 and any("frequency mode" in n for n in d["procs"][0]["notes"])' \
	"frequency mode: period 0 in the process file and a NOTE"
# A time suffix for the time events.
run "$CALLPATH" record -q -e task-clock@500us -o "$WORK/tc" -- "$prog" 300
$CHECK "$WORK/tc" >"$WORK/tc.json" || fail "task-clock measurement invalid"
json_assert "$WORK/tc.json" 'd["procs"][0]["metrics"][0]["period"] == 500000 and d["procs"][0]["metrics"][0]["unit"] == "ns"' "task-clock@500us"
note "ok"
