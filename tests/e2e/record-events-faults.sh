#!/bin/bash
# -e page-faults: overflow sampling of a software perf event. touch.N maps fresh memory and
# writes one byte per 4 KiB page (2 x 32 MB = 16384 faults) from touch_pages(): that
# function's context holds >= 90% of the faults, and the total is the number of faults. The same event
# named through libpfm4 (perf::PAGE-FAULTS) works too.
source "$(dirname "$0")/lib.sh"
CHECK="python3 $CP_SOURCE_DIR/tests/e2e/record-check.py"
for v in O2 O0; do
	prog=$CP_WORKLOADS/touch.$v
	require_built "$prog"
	run "$CALLPATH" record -q -e page-faults@16 -o "$WORK/m$v" -- "$prog" 32
	$CHECK "$WORK/m$v" >"$WORK/c$v.json" || fail "$v: measurement files invalid"
	json_assert "$WORK/c$v.json" '[(m["name"], m["unit"], m["source"], m["mechanism"], m["period"]) for m in d["procs"][0]["metrics"]] == [("page-faults", "events", 3, 4, 16)]' \
		"$v: metric page-faults (events, source PERF, mechanism PERF_EVENT, period 16)"
	"$CALLPATH" report "$WORK/m$v" --format json --threshold 0 >"$WORK/r$v.json" 2>"$WORK/err" ||
		fail "$v: report failed: $(cat "$WORK/err")"
	python3 - "$WORK/r$v.json" "$v" <<'PY' || fail "$v: page faults not where they happen"
import json, sys
d = json.load(open(sys.argv[1]))
names = [m["name"] for m in d["metrics"]]
m = names.index("page-faults")
total = d["nodes"][0]["inclusive"][m]
def incl(fn):
    return sum(n["inclusive"][m] for n in d["nodes"] if n["kind"] == "procedure" and n["name"] == fn)
want = 2 * 32 * 256
print(f"{sys.argv[2]}: total {total}, touch_pages {incl('touch_pages')}, other {incl('other')}")
assert incl("touch_pages") >= 0.9 * total, "touch_pages holds < 90%"
assert want * 0.97 <= incl("touch_pages") <= want * 1.03, f"touch_pages {incl('touch_pages')} faults, want {want} +-3%"
assert incl("toucher") == incl("touch_pages"), "touch_pages not under toucher"
assert incl("other") <= 0.01 * total, "faults in other()"
PY
done
# A name only libpfm4 knows (its perf:: PMU), passed to the runtime in encoded form.
if "$CALLPATH" record --list-events=PAGE-FAULTS 2>&1 | grep -q "perf::PAGE-FAULTS"; then
	run "$CALLPATH" record -q -e perf::PAGE-FAULTS@16 -o "$WORK/pfm" -- "$CP_WORKLOADS/touch.O2" 32
	$CHECK "$WORK/pfm" >"$WORK/pfm.json" || fail "pfm: measurement files invalid"
	json_assert "$WORK/pfm.json" 'd["procs"][0]["metrics"][0]["name"] == "perf::PAGE-FAULTS"' "metric named as typed"
	json_assert "$WORK/pfm.json" '16384 * 0.97 <= d["threads"][0]["totals"][0] <= 16384 * 1.1' "libpfm4-named page faults counted"
else
	note "libpfm4 does not know perf::PAGE-FAULTS here: that part is not checked"
fi
note "ok"
