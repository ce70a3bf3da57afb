#!/bin/bash
# threads.O2 3: three workers, the first doing 3x the work of the others. The default report
# sums the threads; --thread TIDX shows one: per-thread totals add up to the summed total,
# and the heaviest worker holds about 3x the lightest.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/report-helpers/record.sh"

report_record "$WORK/m" "$CP_WORKLOADS/threads.O2" 3
report_json "$WORK/all.json" "$WORK/m"
nthreads=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['summary']['threads'])" "$WORK/all.json")
[ "$nthreads" -ge 4 ] || fail "expected main + 3 workers, the summary says $nthreads threads"
for t in $(seq 0 $((nthreads - 1))); do
	report_json "$WORK/t$t.json" "$WORK/m" --thread "$t"
done
python3 - "$WORK/all.json" "$WORK"/t*.json <<'PY' || fail "per-thread reports do not add up"
import json, sys
docs = [json.load(open(p)) for p in sys.argv[1:]]
total = lambda d: d["nodes"][0]["inclusive"][0]
def crunch(d):
    return sum(n["inclusive"][0] for n in d["nodes"] if n["kind"] == "procedure" and n["name"] == "crunch")
alld, per = docs[0], docs[1:]
assert sum(total(d) for d in per) == total(alld), ([total(d) for d in per], total(alld))
assert all(d["summary"]["threads"] == 1 for d in per)
work = sorted(crunch(d) for d in per if crunch(d) > 0)
print("crunch per worker thread:", work)
assert len(work) == 3, work
ratio = work[-1] / work[0]
assert 2.2 <= ratio <= 4.0, f"heaviest/lightest worker {ratio:.2f}, expected about 3"
PY
# --stat: the statistic over the threads that ran a context (here: the workers). The
# bottom-up view's crunch under --stat max/min/mean is the heaviest/lightest/mean worker's.
for st in max min mean; do
	report_json "$WORK/$st.json" "$WORK/m" --view bottom-up --stat $st
done
python3 - "$WORK" $((nthreads - 1)) <<'PY' || fail "--stat over threads is wrong"
import json, sys
w, last = sys.argv[1], int(sys.argv[2])
def crunch(d):
    return sum(n["inclusive"][0] for n in d["nodes"] if n["kind"] == "procedure" and n["name"] == "crunch")
per = [crunch(json.load(open(f"{w}/t{t}.json"))) for t in range(last + 1)]
per = [x for x in per if x > 0]
got = {st: crunch(json.load(open(f"{w}/{st}.json"))) for st in ["max", "min", "mean"]}
want = {"max": max(per), "min": min(per), "mean": sum(per) / len(per)}
print("crunch per thread", per, "stats", got)
for st in got:
    assert abs(got[st] - want[st]) <= 1e-6 * max(1, want[st]), (st, got[st], want[st])
assert json.load(open(f"{w}/max.json"))["stat"] == "max"
PY
# The record summary shows the imbalance of the hottest contexts: about 3x, held by a worker.
if grep -q "imbalance over" "$WORK/record.err" 2>/dev/null; then
	line=$(grep -A1 "^ max/min" "$WORK/record.err" | tail -1)
	python3 -c "import sys; r = float(sys.argv[1]); assert 2.0 <= r <= 4.5, r" "$(echo "$line" | awk '{print $1}')" ||
		fail "record summary imbalance line is wrong: $line"
elif grep -q "hottest procedures" "$WORK/record.err" "$WORK/record.out" 2>/dev/null; then
	fail "record summary of $nthreads threads has no imbalance section"
fi
note "ok"
