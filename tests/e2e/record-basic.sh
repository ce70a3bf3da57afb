#!/bin/bash
# callpath record on a single-threaded CPU-bound workload (-O2, no frame pointers):
# exit status and output unchanged, valid finished files, the asked rate delivered
# (1000 samples per CPU second, +-20%), unwinds complete.
source "$(dirname "$0")/lib.sh"
CHECK="python3 $CP_SOURCE_DIR/tests/e2e/record-check.py"
prog=$CP_WORKLOADS/chain.O2
require_built "$prog"

expected=$("$prog")
out=$(cd "$WORK" && "$CALLPATH" record -- "$prog" 2>"$WORK/err") || fail "exit status $? (want 0)"
[ "$out" = "$expected" ] || fail "program output changed: '$out' vs '$expected'"
dir=$(ls -d "$WORK"/callpath-chain.O2-* 2>/dev/null | head -1)
[ -d "$dir" ] || fail "default directory callpath-chain.O2-PID not created"
grep -q "measurement in" "$WORK/err" || fail "no summary on stderr: $(cat "$WORK/err")"
$CHECK "$dir" >"$WORK/m.json" || fail "measurement files invalid"
json_assert "$WORK/m.json" 'len(d["procs"]) == 1 and len(d["threads"]) == 1' "one process, one thread"
json_assert "$WORK/m.json" 'd["procs"][0]["flags"] & 1 and d["threads"][0]["flags"] & 1' "files FINISHED"
json_assert "$WORK/m.json" 'd["procs"][0]["metrics"][0]["name"] == "cputime"' "cputime is the default metric"
json_assert "$WORK/m.json" 'd["procs"][0]["exe"].endswith("/chain.O2")' "EXE record"
json_assert "$WORK/m.json" 'any(m["path"].endswith("libc.so.6") for m in d["procs"][0]["modules"])' "libc module recorded"
t='d["threads"][0]'
json_assert "$WORK/m.json" "$t[\"samples\"][0] > 300" "enough samples"
json_assert "$WORK/m.json" "$t[\"totals\"][0] == $t[\"samples\"][0] * d[\"procs\"][0][\"metrics\"][0][\"period\"]" \
	"node values sum to samples x period"
if [ "$(python3 -c "import json; print(json.load(open('$WORK/m.json'))['procs'][0]['metrics'][0]['mechanism'])")" = 1 ]; then
	json_assert "$WORK/m.json" "0.8 < $t[\"samples\"][0] / ($t[\"cpu_ns\"] / 1e9) / 1000 < 1.2" \
		"delivered rate within 20% of 1000 samples per CPU second"
else
	note "perf task-clock unavailable: POSIX timer fallback, rate not checked"
	json_assert "$WORK/m.json" 'any("fall" in n for n in d["procs"][0]["notes"])' "fallback NOTE written"
fi
json_assert "$WORK/m.json" "$t[\"complete\"] >= 0.99 * $t[\"samples\"][0]" "unwinds complete"
json_assert "$WORK/m.json" "set($t[\"kinds\"]) >= {0, 1, 2}" "root, call and PC nodes"

# -o DIR and an explicit period: 500us gives about twice the samples per CPU second.
"$CALLPATH" record -q -e cputime@500us -o "$WORK/fast" -- "$prog" >/dev/null || fail "record -o failed"
$CHECK "$WORK/fast" >"$WORK/f.json" || fail "fast measurement invalid"
json_assert "$WORK/f.json" 'd["procs"][0]["metrics"][0]["period"] == 500000' "period parsed (500us)"
exit 0
