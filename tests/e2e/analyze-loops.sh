#!/bin/bash
# callpath analyze on loopinline.O2 (a hot loop in an always-inline kernel, inlined into
# compute() inside another loop): the database holds the path
#   compute -> loop (outer) -> kernel (inlined) -> loop (inner) -> statement
# with the lines of the MARK comments in the source, and the inner loop holds most samples.
. "$(dirname "$0")/lib.sh"

require_built "$CALLPATH"
WL=$CP_WORKLOADS/loopinline.O2
require_built "$WL"
python3 -c "import sqlite3" 2>/dev/null || skip "python3 has no sqlite3 module"

SRC=$CP_SOURCE_DIR/tests/workloads/loopinline.c

run "$CALLPATH" record -o "$WORK/m" -- "$WL" 1500
run "$CALLPATH" analyze "$WORK/m"
grep -q "contexts" "$WORK/run.out" || fail "no summary line: $(cat "$WORK/run.out")"
[ -f "$WORK/m/callpath.db" ] || fail "no $WORK/m/callpath.db"
run "$CALLPATH" analyze -q -o "$WORK/other.db" "$WORK/m"
[ -s "$WORK/other.db" ] || fail "-o did not write $WORK/other.db"
[ ! -s "$WORK/run.out" ] || fail "-q still printed: $(cat "$WORK/run.out")"

line() { grep -n "MARK:$1" "$SRC" | head -1 | cut -d: -f1; }
python3 - "$WORK/m/callpath.db" "$(line outer-loop)" "$(line inline-call)" "$(line inner-loop)" \
	"$(line inner-body)" "$(line main-call)" <<'PY' || fail "loop / inlined-frame path not found as expected"
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
outer, call, inner, body, maincall = map(int, sys.argv[2:7])
kind = {name: i for i, name in db.execute("select id, name from scope_kind")}
metric = db.execute("select id from metric where name = 'cputime'").fetchone()[0]
def children(parent, k):
    return db.execute("""select s.id, s.line, s.line_lo, s.line_hi, p.name from scope s
        left join procedure p on p.id = s.proc where s.parent = ? and s.kind = ?""",
        (parent, kind[k])).fetchall()
def incl(scope):
    r = db.execute("select incl_sum from value where scope = ? and metric = ?", (scope, metric)).fetchone()
    return r[0] if r else 0
frames = db.execute("""select s.id, s.line from scope s join procedure p on p.id = s.proc
    where s.kind = ? and p.name = 'compute'""", (kind["procedure"],)).fetchall()
assert len(frames) == 1, f"compute should appear once (one call path), found {frames}"
comp, comp_line = frames[0]
assert comp_line == maincall, f"compute's call site line {comp_line}, expected {maincall} (main-call)"
loops = [l for l in children(comp, "loop") if l[2] <= outer <= l[3]]
assert loops, f"no loop covering line {outer} under compute: {children(comp, 'loop')}"
inl = [c for l in loops for c in children(l[0], "inlined") if c[4] == "kernel" and c[1] == call]
assert inl, f"no inlined kernel called at line {call} under the outer loop: " + \
    str([children(l[0], "inlined") for l in loops])
inner_loops = [l for c in inl for l in children(c[0], "loop") if l[2] <= body <= l[3]]
assert inner_loops, f"no loop covering line {body} under the inlined kernel"
stmts = [s for l in inner_loops for s in children(l[0], "statement") if s[1] in (inner, body)]
assert stmts, f"no statement at line {inner} or {body} in the inner loop"
total = incl(0)
share = sum(incl(l[0]) for l in inner_loops) / total if total else 0
print(f"inner loop share {share:.2%} of {total:.0f} ns")
assert share > 0.6, f"inner loop holds {share:.2%} of the samples, expected > 60%"
PY

# The documented "top 10 loops by exclusive time" query (docs/format.md), run as a user
# would with the sqlite3 shell. Both loops are in compute's frame (the kernel is inlined),
# so each one's exclusive time includes the inner loop's: the two lead, tied, with all the
# program's time.
if command -v sqlite3 >/dev/null 2>&1; then
	sed -n '/<!-- top-loops-query -->/,/^```$/p' "$CP_SOURCE_DIR/docs/format.md" |
		sed '1,2d;$d' >"$WORK/top-loops.sql"
	grep -q "SELECT" "$WORK/top-loops.sql" || fail "no top-loops query in docs/format.md"
	sqlite3 -separator '|' "$WORK/m/callpath.db" <"$WORK/top-loops.sql" >"$WORK/top.txt" ||
		fail "the documented query failed"
	head -3 "$WORK/top.txt"
	python3 - "$WORK/top.txt" "$(line outer-loop)" "$(line inner-body)" <<'PY' || fail "top loops query: wrong leading loops"
import sys
rows = [l.rstrip("\n").split("|") for l in open(sys.argv[1]) if l.strip()]
outer, body = int(sys.argv[2]), int(sys.argv[3])
def covers(row, line):
    lo, hi = map(int, row[0].rsplit(":", 1)[1].split("-"))
    return lo <= line <= hi
top = rows[:2]
assert any(covers(r, body) and r[1] == "kernel" for r in top), f"inner loop not in {top}"
assert any(covers(r, outer) and r[1] == "compute" for r in top), f"outer loop not in {top}"
for r in top:
    excl, incl = float(r[2]), float(r[3])
    assert excl > 0 and abs(excl - incl) <= 0.05 * incl, r  # neither calls anything
PY
else
	note "sqlite3 shell not installed: documented query not run"
fi
note "ok"
