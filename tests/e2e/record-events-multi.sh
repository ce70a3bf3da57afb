#!/bin/bash
# Several perf events at once: -e cpu-clock -e page-faults@16 gives two metrics, each with
# consistent totals (cpu-clock ~ the thread's CPU time, page-faults = the faults touch
# makes), read as one group per thread, in period and in frequency mode. The same with the events in separate groups
# (CALLPATH_PERF_SPLIT=1, what record does when they do not fit on the PMU together), with
# cputime beside them, and in every thread of a threaded program.
source "$(dirname "$0")/lib.sh"
CHECK="python3 $CP_SOURCE_DIR/tests/e2e/record-check.py"
prog=$CP_WORKLOADS/touch.O2
require_built "$prog"
want=$((2 * 32 * 256))
check_two() { # DIR LABEL: cpu-clock and page-faults with consistent totals
	$CHECK "$1" >"$WORK/c.json" || fail "$2: measurement files invalid"
	json_assert "$WORK/c.json" '[m["name"] for m in d["procs"][0]["metrics"]][:2] == ["cpu-clock", "page-faults"]' "$2: two metrics"
	json_assert "$WORK/c.json" 'd["threads"][0]["samples"][0] > 10 and d["threads"][0]["samples"][1] > 10' "$2: both metrics sampled"
	json_assert "$WORK/c.json" '0.85 < d["threads"][0]["totals"][0] / d["threads"][0]["cpu_ns"] < 1.15' "$2: cpu-clock total = CPU time +-15%"
	json_assert "$WORK/c.json" "$want * 0.97 <= d[\"threads\"][0][\"totals\"][1] <= $want * 1.1" "$2: page-faults total = $want faults"
	"$CALLPATH" report "$1" --format json --threshold 0 >"$WORK/r.json" 2>"$WORK/err" || fail "$2: report: $(cat "$WORK/err")"
	python3 - "$WORK/r.json" "$2" <<'PY' || fail "$2: metrics in the wrong contexts"
import json, sys
d = json.load(open(sys.argv[1]))
names = [m["name"] for m in d["metrics"]]
c, f = names.index("cpu-clock"), names.index("page-faults")
incl = lambda fn, m: sum(n["inclusive"][m] for n in d["nodes"] if n["kind"] == "procedure" and n["name"] == fn)
tot = d["nodes"][0]["inclusive"]
print(f"{sys.argv[2]}: faults touch_pages {incl('touch_pages', f) / tot[f]:.3f}, cpu other {incl('other', c) / tot[c]:.3f} touch_pages {incl('touch_pages', c) / tot[c]:.3f}")
assert incl("touch_pages", f) >= 0.9 * tot[f]
assert incl("other", c) >= 0.08 * tot[c] and incl("touch_pages", c) >= 0.2 * tot[c]
PY
}
run "$CALLPATH" record -q -e cpu-clock -e page-faults@16 -o "$WORK/g" -- "$prog" 32
check_two "$WORK/g" grouped
json_assert "$WORK/c.json" 'not any("multiplex" in n or "never counted" in n for n in d["procs"][0]["notes"])' "software events are never multiplexed"
# Frequency mode: weights are the counts read from the group at each sample (the member
# page-faults is read at its position in the leader's group).
run "$CALLPATH" record -q -e cpu-clock@f1000 -e page-faults@f2000 -o "$WORK/f" -- "$prog" 32
check_two "$WORK/f" frequency
# Three in one group, read at positions 0, 1 and 2.
run "$CALLPATH" record -q -e cpu-clock@f1000 -e task-clock@f1000 -e page-faults@f2000 -o "$WORK/g3" -- "$prog" 32
$CHECK "$WORK/g3" >"$WORK/g3.json" || fail "three events: files invalid"
json_assert "$WORK/g3.json" "0.85 < d[\"threads\"][0][\"totals\"][1] / d[\"threads\"][0][\"cpu_ns\"] < 1.15 and $want * 0.97 <= d[\"threads\"][0][\"totals\"][2] <= $want * 1.1" \
	"three events: task-clock = CPU time, page-faults = $want"
# Separate groups, through the runtime's own configuration.
mkdir -p "$WORK/s"
CALLPATH_OUTPUT=$WORK/s CALLPATH_EVENTS=cpu-clock,page-faults@16 CALLPATH_PERF_SPLIT=1 \
	LD_PRELOAD=$CP_BUILD_DIR/libcallpath-rt.so "$prog" 32 >/dev/null || fail "split run failed"
check_two "$WORK/s" split
# With cputime alongside (its own perf event, not in the group).
run "$CALLPATH" record -q -e cpu-clock -e page-faults@16 -e cputime -o "$WORK/t" -- "$prog" 32
check_two "$WORK/t" "with cputime"
json_assert "$WORK/c.json" '0.85 < d["threads"][0]["totals"][2] / d["threads"][0]["totals"][0] < 1.15' "cputime and cpu-clock totals agree"
# Threads: each thread's events are its own (opened on its tid, signals routed to it).
thr=$CP_WORKLOADS/threads.O2
run "$CALLPATH" record -q -e cpu-clock -e page-faults -o "$WORK/th" -- "$thr" 3
$CHECK "$WORK/th" >"$WORK/th.json" || fail "threads: files invalid"
json_assert "$WORK/th.json" 'len(d["threads"]) == 4' "four threads"
json_assert "$WORK/th.json" 'sum(t["samples"][0] > 20 for t in d["threads"]) == 3' "each worker has cpu-clock samples"
json_assert "$WORK/th.json" 'all(0.8 < t["totals"][0] / t["cpu_ns"] < 1.2 for t in d["threads"] if t["cpu_ns"] > 50e6)' \
	"each worker's cpu-clock total is its own CPU time"
note "ok"
