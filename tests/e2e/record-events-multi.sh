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
# checks DIR LABEL EXPR MESSAGE [EXPR MESSAGE]...: python3 conditions over the measurement
# in DIR, its threads t[i] and their totals; prints the measured values (in one line) and
# fails naming every condition that does not hold.
checks() {
	local dir=$1 label=$2
	shift 2
	$CHECK "$dir" >"$WORK/c.json" || fail "$label: measurement files invalid"
	python3 - "$WORK/c.json" "$label" "$TEST_NAME" "$want" "$@" <<'PY' || fail "$label: see the measured values above"
import json, sys
d = json.load(open(sys.argv[1]))
label, name, want, conds = sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5:]
# The events after a thread's last sample of an event are not attributed (docs/cmd-record.md):
# less than one period. In period mode (@16) that is < 16 faults; in frequency mode the
# kernel picks the period, and it ran at 230-750 faults (tail up to 408, 2.5 % of the
# 16384, 30 runs under load 15-20), near the run's average period total/samples, which it
# approaches by 1/8 of the gap per adjustment: the tail is allowed two average periods, or
# 3 % if that is more.
def fault_total_ok(x, m):
    tail = max(0.03 * want, 2 * x["totals"][m] / max(x["samples"][m], 1))
    return want - tail <= x["totals"][m] <= want * 1.1
t = d["threads"]
metrics = [m["name"] for m in d["procs"][0]["metrics"]]
print("%s: metrics %s; %s" % (label, metrics, "; ".join(
    "thread %d samples %s totals %s cpu_ns %d" % (x["tidx"], x["samples"], x["totals"], x["cpu_ns"])
    for x in t)))
bad = [msg for expr, msg in zip(conds[::2], conds[1::2]) if not eval(expr)]
for msg in bad:
    print("FAIL [%s]: %s: %s" % (name, label, msg), file=sys.stderr)
sys.exit(1 if bad else 0)
PY
}
# cpu-clock's total against the thread's CPU time: 0.99-1.00 on a quiet machine; the run is
# short (~0.1 s), and the thread's CPU time also covers what the event may not see (the tail
# after the last sample, work before the event counts). 0.83 once in a CI-style run's ASan
# pass (105 ms of 126 ms; why was not established): -25 % is allowed.
check_two() { # DIR LABEL: cpu-clock and page-faults with consistent totals
	checks "$1" "$2" \
		'metrics[:2] == ["cpu-clock", "page-faults"]' "two metrics" \
		't[0]["samples"][0] > 10 and t[0]["samples"][1] > 10' "both metrics sampled" \
		'0.75 < t[0]["totals"][0] / t[0]["cpu_ns"] < 1.15' "cpu-clock total = CPU time -25/+15%" \
		"fault_total_ok(t[0], 1)" "page-faults total = $want faults, less the tail"
	"$CALLPATH" report "$1" --format json --threshold 0 >"$WORK/r.json" 2>"$WORK/err" || fail "$2: report: $(cat "$WORK/err")"
	python3 - "$WORK/r.json" "$2" <<'PY' || fail "$2: metrics in the wrong contexts"
import json, sys
d = json.load(open(sys.argv[1]))
names = [m["name"] for m in d["metrics"]]
c, f = names.index("cpu-clock"), names.index("page-faults")
incl = lambda fn, m: sum(n["inclusive"][m] for n in d["nodes"] if n["kind"] == "procedure" and n["name"] == fn)
tot = d["nodes"][0]["inclusive"]
print(f"{sys.argv[2]}: faults touch_pages {incl('touch_pages', f) / tot[f]:.3f}, cpu other {incl('other', c) / tot[c]:.3f} touch_pages {incl('touch_pages', c) / tot[c]:.3f}")
assert incl("touch_pages", f) >= 0.9 * tot[f], "touch_pages holds >= 90 % of the faults"
assert incl("other", c) >= 0.08 * tot[c], "other holds >= 8 % of cpu-clock"
assert incl("touch_pages", c) >= 0.2 * tot[c], "touch_pages holds >= 20 % of cpu-clock"
PY
}
run "$CALLPATH" record -q -e cpu-clock -e page-faults@16 -o "$WORK/g" -- "$prog" 32
check_two "$WORK/g" grouped
checks "$WORK/g" grouped 'not any("multiplex" in n or "never counted" in n for n in d["procs"][0]["notes"])' \
	"software events are never multiplexed"
# Frequency mode: weights are the counts read from the group at each sample (the member
# page-faults is read at its position in the leader's group).
run "$CALLPATH" record -q -e cpu-clock@f1000 -e page-faults@f2000 -o "$WORK/f" -- "$prog" 32
check_two "$WORK/f" frequency
# Three in one group, read at positions 0, 1 and 2.
run "$CALLPATH" record -q -e cpu-clock@f1000 -e task-clock@f1000 -e page-faults@f2000 -o "$WORK/g3" -- "$prog" 32
checks "$WORK/g3" "three events" \
	'0.75 < t[0]["totals"][1] / t[0]["cpu_ns"] < 1.15' "task-clock = CPU time -25/+15%" \
	"fault_total_ok(t[0], 2)" "page-faults = $want, less the tail"
# Separate groups, through the runtime's own configuration.
mkdir -p "$WORK/s"
CALLPATH_OUTPUT=$WORK/s CALLPATH_EVENTS=cpu-clock,page-faults@16 CALLPATH_PERF_SPLIT=1 \
	LD_PRELOAD=$CP_BUILD_DIR/libcallpath-rt.so "$prog" 32 >/dev/null || fail "split run failed"
check_two "$WORK/s" split
# With cputime alongside (its own perf event, not in the group).
run "$CALLPATH" record -q -e cpu-clock -e page-faults@16 -e cputime -o "$WORK/t" -- "$prog" 32
check_two "$WORK/t" "with cputime"
checks "$WORK/t" "with cputime" '0.85 < t[0]["totals"][2] / t[0]["totals"][0] < 1.15' \
	"cputime and cpu-clock totals agree"
# Threads: each thread's events are its own (opened on its tid, signals routed to it).
thr=$CP_WORKLOADS/threads.O2
run "$CALLPATH" record -q -e cpu-clock -e page-faults -o "$WORK/th" -- "$thr" 3
checks "$WORK/th" threads 'len(t) == 4' "four threads" \
	'sum(x["samples"][0] > 20 for x in t) == 3' "each worker has cpu-clock samples" \
	'all(0.8 < x["totals"][0] / x["cpu_ns"] < 1.2 for x in t if x["cpu_ns"] > 50e6)' \
	"each worker's cpu-clock total is its own CPU time"
note "ok"
