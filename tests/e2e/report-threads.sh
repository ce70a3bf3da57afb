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
note "ok"
