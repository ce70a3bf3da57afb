#!/bin/bash
# callpath struct on the C and Fortran fixtures (gcc/clang -O0/-O2/-O3, gfortran): every
# source loop marked "LOOP name" in the source is found with a line range containing its
# line and the expected nesting; the static inline `dot` appears as an inlined frame at
# its "CALL dot" line inside the outer loop when the compiler inlined it.
source "$(dirname "$0")/lib.sh"
FX=$CP_BUILD_DIR/tests/fixtures/src
SRC=$CP_SOURCE_DIR/tests/fixtures/src
require_built "$FX/loops.gcc.O2"
export XDG_CACHE_HOME=$WORK/cache
command -v clang >/dev/null || note "clang is missing: clang variants skipped"
command -v gfortran >/dev/null || note "gfortran is missing: Fortran variants skipped"

check() { # check BINARY SOURCE
	local bin=$1 src=$2
	[ -e "$bin" ] || return 0
	"$CALLPATH" struct --no-cache --dump --format json "$bin" >"$WORK/s.json" 2>"$WORK/s.err" ||
		{ cat "$WORK/s.err" >&2; fail "struct failed on $bin"; }
	python3 - "$WORK/s.json" "$src" "$(basename "$bin")" <<'PY' || fail "wrong structure for $bin"
import json, os, re, sys
doc = json.load(open(sys.argv[1]))
src, name = sys.argv[2], sys.argv[3]
base = os.path.basename(src)
marks, calls = {}, {}
for no, text in enumerate(open(src), 1):
    m = re.search(r"LOOP ([\w.]+)", text)
    if m: marks[m.group(1)] = no
    m = re.search(r"CALL ([\w.]+)", text)
    if m: calls[m.group(1)] = no
# Flatten the tree with parent links.
nodes = []
def walk(s, parent):
    s["parent"] = parent
    nodes.append(s)
    for c in s["children"]:
        walk(c, s)
for p in doc["procedures"]:
    walk(p, None)
def ancestors(s):
    while s["parent"] is not None:
        s = s["parent"]
        yield s
loops = [n for n in nodes if n["kind"] == "loop" and os.path.basename(n["file"]) == base]
errors = []
for l in loops:
    if not (l["line_lo"] <= l["line"] <= l["line_hi"]):
        errors.append("loop at line %d: header line outside its range %d-%d" % (l["line"], l["line_lo"], l["line_hi"]))
    if not l["back_edges"] and not l["irreducible"]:
        errors.append("loop at line %d has no back edge" % l["line"])
    # Instrumentation points (Paradyn): entered, left, and iterated through its header.
    if not l["entries"] or not l["exits"]:
        errors.append("loop at line %d lacks entry or exit edges" % l["line"])
    if not l["irreducible"] and any(to != l["addr"] for _, to in l["back_edges"] + l["entries"]):
        errors.append("loop at line %d: a back or entry edge does not go to its header" % l["line"])
    inside = lambda a: any(lo <= a < hi for lo, hi in l["ranges"])
    if any(not inside(f) or (to and inside(to)) for f, to in l["exits"]):
        errors.append("loop at line %d: an exit edge does not leave the loop" % l["line"])
nesting = [("nest.inner", "nest.outer"), ("triple.b", "triple.a"), ("triple.c", "triple.b"),
           ("f.inner", "f.outer")]
def candidates(line):
    # A loop covers its marker line, or (vectorised bodies keep only the body's lines)
    # starts on the line just below it. Smallest first.
    c = [l for l in loops if l["line_lo"] <= line <= l["line_hi"] or l["line_lo"] == line + 1]
    return sorted(c, key=lambda l: (l["line_hi"] - l["line_lo"], -len(list(ancestors(l)))))
def nested_ok(found):
    for child, parent in nesting:
        c, p = found.get(child), found.get(parent)
        if c is not None and p is not None and not any(a is p for a in ancestors(c)):
            return False
    return True
# Search for a one-to-one assignment of markers to loops that respects the nesting.
order = sorted(marks, key=lambda m: -marks[m])
cands = {m: candidates(marks[m]) for m in order}
for m in order:
    if not cands[m]:
        errors.append("no loop found for LOOP %s (line %d)" % (m, marks[m]))
order = [m for m in order if cands[m]]
def search(k, found, used):
    if k == len(order):
        return dict(found) if nested_ok(found) else None
    for l in cands[order[k]]:
        if id(l) in used:
            continue
        found[order[k]] = l
        r = search(k + 1, found, used | {id(l)})
        if r is not None:
            return r
        del found[order[k]]
    return None
found = search(0, {}, frozenset())
if found is None:
    found = {m: cands[m][0] for m in order}
    errors.append("no assignment of loops to markers has the source nesting: " +
                  ", ".join("%s->%d-%d" % (m, l["line_lo"], l["line_hi"]) for m, l in found.items()))
for a, b in [("f.sum", "f.outer"), ("collatz", "nest.outer"), ("L1", "L2")]:
    if found.get(a) is not None and found.get(a) is found.get(b):
        errors.append("loops %s and %s were merged" % (a, b))
if "dot" in calls:
    inl = [n for n in nodes if n["kind"] == "inline" and n["name"] == "dot"]
    procs = [n for n in nodes if n["kind"] == "procedure" and n["name"] == "dot"]
    if not inl and not procs:
        errors.append("dot is neither a procedure nor inlined")
    # Code motion may hoist part of the inlined body out of the loop (the paper's
    # loop-invariant code motion): all frames need the right call site, and at least one
    # must sit inside the outer loop with dot's own loop below it.
    for n in inl:
        if n["call_line"] != calls["dot"] or os.path.basename(n["call_file"]) != base:
            errors.append("dot inlined at %s:%d, expected line %d" % (n["call_file"], n["call_line"], calls["dot"]))
    outer = found.get("nest.outer")
    if inl and not any((outer is None or any(a is outer for a in ancestors(n))) and
                       any(c["kind"] == "loop" for c in n["children"]) for n in inl):
        errors.append("no inlined dot frame inside the outer loop of nest with a loop below it")
    if inl and found.get("dot") is not None and not any(a["kind"] == "inline" for a in ancestors(found["dot"])):
        errors.append("the loop of dot is not under its inlined frame")
for e in errors:
    print("%s: %s" % (name, e), file=sys.stderr)
print("%s: %d loops, %d marked loops checked, %d inlined dot frames" %
      (name, len(loops), len(marks), len([n for n in nodes if n["kind"] == "inline" and n["name"] == "dot"])))
sys.exit(1 if errors else 0)
PY
}

n=0
for cc in gcc clang; do
	for opt in O0 O2 O3; do
		check "$FX/loops.$cc.$opt" "$SRC/loops.c"
		n=$((n + 1))
	done
done
for opt in O0 O2 O3; do check "$FX/nest.gfortran.$opt" "$SRC/nest.f90"; done
check "$FX/loops.gcc.O2.nopie" "$SRC/loops.c"
check "$FX/mp.g++.O2" "$SRC/mp.cpp"
check "$FX/libloops.gcc.O2.so" "$SRC/loops.c"
# Stripped: procedures from .dynsym/FDEs, the same loops by address, no lines.
if [ -e "$FX/loops.gcc.O2.stripped" ]; then
	run "$CALLPATH" struct --no-cache --dump --format json "$FX/loops.gcc.O2"
	cp "$WORK/run.out" "$WORK/full.json"
	run "$CALLPATH" struct --no-cache --dump --format json "$FX/loops.gcc.O2.stripped"
	python3 - "$WORK/full.json" "$WORK/run.out" <<'PY' || fail "stripped fixture differs"
import json, sys
def loops(doc):
    out = []
    def walk(s):
        if s["kind"] == "loop": out.append(s["addr"])
        for c in s["children"]: walk(c)
    for p in doc["procedures"]: walk(p)
    return sorted(out)
full, stripped = (json.load(open(f)) for f in sys.argv[1:3])
if loops(full) != loops(stripped):
    sys.exit("loop headers differ: %s vs %s" % (loops(full), loops(stripped)))
if any(p["debug_info"] for p in stripped["procedures"]):
    sys.exit("stripped binary claims debug info")
print("stripped: %d loops, same headers as unstripped" % len(loops(stripped)))
PY
fi
note "all fixtures pass"
