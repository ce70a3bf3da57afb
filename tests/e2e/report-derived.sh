#!/bin/bash
# Derived metrics at report time (--metric NAME=FORMULA) on chain.O2: a derived column is its
# formula over each scope's values; a division by zero has no value (JSON null, empty CSV
# field and text column) and sorts last; several metrics show as columns; bad formulas and
# unknown metrics are clear errors.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/report-helpers/record.sh"

report_record "$WORK/m" "$CP_WORKLOADS/chain.O2" 1000
report_json "$WORK/half.json" "$WORK/m" --metric cputime,half=cputime/2 --view flat
python3 - "$WORK/half.json" <<'PY' || fail "half=cputime/2 is not half of cputime"
import json, sys
d = json.load(open(sys.argv[1]))
names = [m["name"] for m in d["metrics"]]
c, h = names.index("cputime"), names.index("half")
assert d["metrics"][h]["kind"] == "derived" and d["metrics"][h]["formula"] == "cputime/2"
assert d["shown"] == ["cputime", "half"], d["shown"]
for n in d["nodes"]:
    for k in ("inclusive", "exclusive"):
        assert abs(n[k][h] - n[k][c] / 2) <= 1e-6 * max(1, n[k][c]), (n["name"], k, n[k])
print("half checked on", len(d["nodes"]), "nodes")
PY
# x = cputime/cputime: 1 where a procedure has exclusive time, no value (0/0) where it has
# none (main, run, ...). Sorted by x's exclusive value, those come last.
report_json "$WORK/x.json" "$WORK/m" --metric "x=cputime/cputime" --sort x:excl --view bottom-up --depth 1
python3 - "$WORK/x.json" <<'PY' || fail "no-value sorting or null output is wrong"
import json, sys
d = json.load(open(sys.argv[1]))
x = [m["name"] for m in d["metrics"]].index("x")
assert d["sort"] == "exclusive" and d["sort_metric"] == "x"
top = [n for n in d["nodes"] if n["depth"] == 1]
vals = [n["exclusive"][x] for n in top]
print([(n["name"], n["exclusive"][x]) for n in top])
assert None in vals and any(v is not None for v in vals), vals
first_none = vals.index(None)
assert all(v is None for v in vals[first_none:]), f"a value after a null: {vals}"
assert all(abs(v - 1) < 1e-9 for v in vals[:first_none]), vals
assert d["nodes"][0]["inclusive"][x] == 1
assert all(n["exclusive_pct"][x] is None for n in top if n["exclusive"][x] is None)
PY
run "$CALLPATH" report "$WORK/m" --metric "x=cputime/cputime" --view bottom-up --depth 1 --format csv
grep -q '^[0-9]*,0,1,procedure,main,.*,,$' "$WORK/run.out" ||
	fail "CSV: main's exclusive x is not empty: $(grep ',main,' "$WORK/run.out")"
# Text: both columns, x empty where it has no value.
run "$CALLPATH" report "$WORK/m" --no-summary --metric cputime --metric "x=cputime/cputime" --view bottom-up --depth 1
grep -q "metric cputime,x" "$WORK/run.out" || fail "text header lacks the two metrics"
grep -E "^ *[0-9.]+% +[0-9.]+s +[0-9.]+% +[0-9.]+s +[0-9.]+% +1 +  +(├─|└─) main " "$WORK/run.out" >/dev/null ||
	fail "text: main's row should show x inclusive 1 and exclusive empty: $(grep ' main ' "$WORK/run.out")"
# Errors: a bad formula names the column; an unknown metric lists the metrics there are.
"$CALLPATH" report "$WORK/m" --metric "bad=cputime/" >/dev/null 2>"$WORK/err" && fail "bad formula accepted"
grep -q "column" "$WORK/err" || fail "unclear message for a bad formula: $(cat "$WORK/err")"
"$CALLPATH" report "$WORK/m" --metric "y=nosuch*2" >/dev/null 2>"$WORK/err" && fail "unknown input accepted"
grep -q "nosuch" "$WORK/err" || fail "unclear message for an unknown input: $(cat "$WORK/err")"
"$CALLPATH" report "$WORK/m" --sort nosuch >/dev/null 2>"$WORK/err" && fail "--sort nosuch accepted"
grep -q "cputime" "$WORK/err" || fail "--sort error does not list the metrics: $(cat "$WORK/err")"
# The database is not changed by report-time metrics: a second report does not know x.
"$CALLPATH" report "$WORK/m" --metric x >/dev/null 2>&1 && fail "x was saved into the database"
note "ok"
