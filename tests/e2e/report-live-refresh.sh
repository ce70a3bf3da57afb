#!/bin/bash
# callpath report --live redraws the profile of a running program from its measurement
# directory (not a terminal: one refresh after another), without writing anything into
# the directory, and stops by itself with the final profile once the program has ended.
source "$(dirname "$0")/lib.sh"
prog=$CP_WORKLOADS/chain.O2
require_built "$prog"
"$CALLPATH" record -q --no-analyze -o "$WORK/m" -- "$prog" 3000 >"$WORK/rec.out" 2>&1 &
rec=$!
for _ in $(seq 50); do ls "$WORK"/m/*.proc >/dev/null 2>&1 && break; sleep 0.1; done
timeout 120 "$CALLPATH" report --live=0.3 --format csv "$WORK/m" >"$WORK/live.out" 2>"$WORK/live.err"
rc=$?
wait $rec || fail "record failed: $(cat "$WORK/rec.out")"
[ $rc -eq 0 ] || { cat "$WORK/live.err" >&2; fail "report --live exited $rc"; }
n=$(grep -c '^== callpath report --live' "$WORK/live.out")
[ "$n" -ge 2 ] || fail "expected several refreshes, got $n"
grep -q 'program running ==' "$WORK/live.out" || fail "no refresh while the program ran"
tail -n +1 "$WORK/live.out" | grep '^==' | tail -1 | grep -q 'program finished' ||
	fail "the last refresh is not the finished profile"
# The final profile is complete: heavy3 holds ~3/4 of the time.
awk '/program finished ==/{f=1; next} f' "$WORK/live.out" >"$WORK/final.csv"
python3 - "$WORK/final.csv" <<'PY' || fail "final profile wrong"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
tot = float(rows[0]["cputime_inclusive"])
heavy = sum(float(r["cputime_inclusive"]) for r in rows if r["name"] == "heavy3")
print("heavy3 share", heavy / tot)
assert 0.6 < heavy / tot < 0.9
PY
[ ! -e "$WORK/m/callpath.db" ] || fail "--live wrote a database into the measurement"
note "$n refreshes"
