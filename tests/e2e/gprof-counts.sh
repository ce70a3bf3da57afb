#!/bin/bash
# callpath gprof on a program built without -pg writes a gmon.out that gprof reads, whose
# call counts equal, arc by arc, gprof's own from the same program built with -pg.
. "$(dirname "$0")/lib.sh"
require_tool gprof
plain=$CP_WORKLOADS/probe-gprof.O2
pg=$CP_WORKLOADS/probe-gprof.pg
run "$CALLPATH" gprof -o "$WORK/ours.out" -- "$plain"
grep -q "^probe-gprof " "$WORK/run.out" || fail "program output missing"
(cd "$WORK" && "$pg" >/dev/null) || fail "the -pg build failed"
gprof -b -q "$plain" "$WORK/ours.out" >"$WORK/ours.txt" 2>"$WORK/ours.err" ||
	fail "gprof cannot read our gmon.out: $(cat "$WORK/ours.err")"
gprof -b -q "$pg" "$WORK/gmon.out" >"$WORK/pg.txt" || fail "gprof on the -pg run"
python3 - "$WORK/ours.txt" "$WORK/pg.txt" <<'PY' || fail "arc counts differ"
import re, sys
FUNCS = {"main", "fa", "fb", "fc", "fd"}
def arcs(path):
    out, parents = {}, []
    for line in open(path):
        if line.startswith("---"):
            parents = []
            continue
        m = re.match(r"\s*\[\d+\]\s+[\d.]+\s+[\d.]+\s+[\d.]+\s+(\d+)?\S*\s+(\S+)", line)
        if m:
            callee = m.group(2)
            for caller, n in parents:
                out[(caller, callee)] = n
            parents = None
            continue
        m = re.match(r"\s+[\d.]+\s+[\d.]+\s+(\d+)/\d+\s+(\S+)", line)
        if m and parents is not None:
            parents.append((m.group(2), int(m.group(1))))
    return {k: v for k, v in out.items() if k[0] in FUNCS and k[1] in FUNCS}
ours, theirs = arcs(sys.argv[1]), arcs(sys.argv[2])
want = {("main", "fa"): 3, ("main", "fc"): 7, ("fa", "fb"): 30, ("fa", "fc"): 15,
        ("fb", "fc"): 60, ("fb", "fd"): 30}
if theirs != want:
    print("the -pg build's arcs are not the designed ones:", theirs, file=sys.stderr)
    sys.exit(1)
if ours != theirs:
    print("ours:", ours, "\ngprof -pg:", theirs, file=sys.stderr)
    sys.exit(1)
PY
# The flat profile has time (the histogram) for the spinning functions.
gprof -b -p "$plain" "$WORK/ours.out" | grep -qE '^ +[0-9.]+ +[0-9.]+ +[0-9.]+ .* f[abcd]$' ||
	fail "no flat profile"
# Errors: a missing program.
"$CALLPATH" gprof -o "$WORK/x.out" /nonexistent/prog 2>/dev/null && fail "missing program accepted"
note "ok"
