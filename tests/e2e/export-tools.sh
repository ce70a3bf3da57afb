#!/bin/bash
# callpath export, each format read by the real tool that reads it, on chain.O2
# (main -> run -> heavy3 / light1, 3:1 by construction). Totals of every export agree with
# the database's (within each format's rounding) and the hot procedure is heavy3.
source "$(dirname "$0")/lib.sh"
prog=$CP_WORKLOADS/chain.O2
require_built "$prog"
require_tool sqlite3
run "$CALLPATH" record -q -o "$WORK/m" -- "$prog" 600
DB=$WORK/m/callpath.db
[ -f "$DB" ] || fail "record did not write $DB"
# The database's total CPU time (ns) and heavy3's inclusive share.
total=$(sqlite3 "$DB" "SELECT incl_sum FROM value v JOIN metric m ON m.id = v.metric
	WHERE v.scope = 0 AND m.name = 'cputime'")
[ -n "$total" ] || fail "no cputime total in the database"
note "database total: $total ns"
cd "$WORK" || exit 1
close() { # close A B TOLERANCE: |A-B| <= TOLERANCE
	python3 -c "import sys; a,b,t=map(float,sys.argv[1:]); sys.exit(0 if abs(a-b)<=t else 1)" "$@"
}

# --- callgrind: callgrind_annotate reads it; totals and the top function ---
require_tool callgrind_annotate
run "$CALLPATH" export "$WORK/m" --format callgrind -o cg.out
callgrind_annotate cg.out >cg.txt 2>&1 || { cat cg.txt >&2; fail "callgrind_annotate failed"; }
cg_total=$(grep "PROGRAM TOTALS" cg.txt | awk '{gsub(",","",$1); print $1}')
close "$cg_total" "$total" 1 || fail "callgrind total $cg_total != $total"
grep -A3 "file:function" cg.txt | grep -m1 -E "^ *[0-9]" | grep -q "heavy3" ||
	fail "callgrind: heavy3 is not the top function: $(grep -A4 'file:function' cg.txt)"
callgrind_annotate --inclusive=yes cg.out | grep -q "run" || fail "callgrind: no inclusive cost for run"

# --- pprof: go tool pprof -top and -traces ---
if command -v go >/dev/null 2>&1; then
	export HOME=$WORK/home GOCACHE=$WORK/home/cache GOPATH=$WORK/home/go GOTOOLCHAIN=local GOFLAGS=
	mkdir -p "$HOME"
	run "$CALLPATH" export "$WORK/m" --format pprof -o prof.pb.gz
	go tool pprof -top -unit=ms prof.pb.gz >top.txt 2>&1 || { cat top.txt >&2; fail "pprof -top failed"; }
	pp_total=$(sed -n 's/.*Total samples = \([0-9.]*\)ms.*/\1/p' top.txt)
	[ -n "$pp_total" ] || { cat top.txt >&2; fail "pprof: no total"; }
	close "$pp_total" "$(python3 -c "print($total/1e6)")" 1 || fail "pprof total $pp_total ms != $total ns"
	# spin() is inlined into heavy3 and light1: pprof shows it as "spin (inline)" with the
	# flat cost, heavy3 with 3/4 of the cumulative cost.
	python3 - top.txt <<'PY' || { cat top.txt >&2; fail "pprof: heavy3's cumulative share wrong"; }
import sys
for l in open(sys.argv[1]):
    f = l.split()
    if len(f) >= 6 and f[-1] == "heavy3":
        cum = float(f[4].rstrip("%"))
        print("pprof: heavy3 cum", cum, "%")
        sys.exit(0 if 60 <= cum <= 90 else 1)
sys.exit(1)
PY
	grep -q "spin (inline)" top.txt || fail "pprof: the inlined frame is missing"

	go tool pprof -traces prof.pb.gz >traces.txt 2>&1 || fail "pprof -traces failed"
	python3 - traces.txt <<'PY' || fail "pprof -traces: no heavy3 <- run <- main trace"
import sys
blocks = open(sys.argv[1]).read().split("-----------+")
ok = any(b.split().count("heavy3") and "run" in b.split() and "main" in b.split() for b in blocks)
sys.exit(0 if ok else 1)
PY
else
	note "go not installed: pprof export not read"
fi

# --- folded stacks: strict format, totals ---
run "$CALLPATH" export "$WORK/m" --format folded -o prof.folded
python3 - prof.folded "$total" <<'PY' || fail "folded stacks wrong"
import re, sys
lines = open(sys.argv[1]).read().splitlines()
total = float(sys.argv[2])
s, hot = 0, 0
for l in lines:
    m = re.fullmatch(r"([^ ;][^;]*(?:;[^;]+)*) (\d+)", l)
    assert m, f"bad folded line: {l!r}"
    s += int(m.group(2))
    if "heavy3" in m.group(1).split(";"):  # spin() is inlined below it
        hot += int(m.group(2))
assert abs(s - total) <= len(lines), (s, total)
assert 0.6 < hot / s < 0.9, hot / s
print("folded total", s, "heavy3 share", round(hot / s, 3))
PY

# --- speedscope JSON: valid against speedscope's own schema; totals ---
SCHEMA=$CP_SOURCE_DIR/tools/node/node_modules/speedscope/dist/release/file-format-schema.json
run "$CALLPATH" export "$WORK/m" --format speedscope -o prof.speedscope.json
if [ -f "$SCHEMA" ] && python3 -c "import jsonschema" 2>/dev/null; then
	python3 - prof.speedscope.json "$SCHEMA" "$total" <<'PY' || fail "speedscope JSON invalid"
import json, sys, jsonschema
doc, schema, total = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), float(sys.argv[3])
jsonschema.validate(doc, schema)
p = doc["profiles"][0]
assert abs(sum(p["weights"]) - total) <= 1, (sum(p["weights"]), total)
assert len(p["samples"]) == len(p["weights"])
print("speedscope: valid,", len(p["samples"]), "stacks")
PY
else
	note "speedscope schema or python3-jsonschema missing (scripts/install-deps.sh installs them)"
fi

# --- gmon.out: GNU gprof's flat profile and call graph ---
require_tool gprof
run "$CALLPATH" export "$WORK/m" --format gmon -o gmon.out
gprof -b "$prog" gmon.out >gprof.txt 2>&1 || { cat gprof.txt >&2; fail "gprof failed"; }
python3 - gprof.txt "$total" <<'PY' || fail "gprof output wrong"
import re, sys
text = open(sys.argv[1]).read()
total = float(sys.argv[2]) / 1e9
flat = text.split("Call graph")[0]
rows = [l.split() for l in flat.splitlines() if re.match(r"\s*\d+\.\d+\s+\d", l)]
assert rows and rows[0][-1] == "heavy3", rows[:2]
self_s = sum(float(r[2]) for r in rows)
assert abs(self_s - total) <= 0.01 * len(rows) + 0.01, (self_s, total)
graph = text.split("Call graph")[1]
assert re.search(r"heavy3 \[\d+\]", graph) and re.search(r"run \[\d+\]", graph), "arcs missing"
print("gprof: flat total", self_s, "s of", total)
PY
note "ok"
