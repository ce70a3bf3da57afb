#!/bin/bash
# Probes on functions without symbol (docs/cmd-probe.md "Functions without a symbol"): in a
# copy of a workload stripped with `strip --strip-all`, the reports name each function
# sub_HEX (its address, from its .eh_frame FDE); `probe -f sub_HEX` probes it, with its size
# from that FDE. Checked against the unstripped file, the independent reference: the same
# calls per calling context as `probe -f NAME` there (nm gives each NAME's address), and the
# report names the probed functions sub_HEX, as `callpath struct` of the stripped copy does.
# Then loop probes through the control channel (`--add-loops sub_HEX`) give the program's
# own iteration counts, and an address where no function starts is refused with its reason.
. "$(dirname "$0")/lib.sh"
require_built "$CALLPATH" "$CP_WORKLOADS/probe.O2" "$CP_WORKLOADS/loops.O2"
require_tool strip
require_tool nm

strip --strip-all -o "$WORK/probe" "$CP_WORKLOADS/probe.O2" || fail "strip"
strip --strip-all -o "$WORK/loops" "$CP_WORKLOADS/loops.O2" || fail "strip"
nm "$WORK/probe" 2>&1 | grep -q "no symbols" || fail "the stripped copy has symbols"
addr() { # FILE FUNCTION: its address as the sub_ names write it
	nm "$1" | awk -v f="$2" '$3 == f { sub(/^0+/, "", $1); print $1 }'
}

# The names: callpath struct of the stripped copy has a procedure sub_HEX for each function.
run "$CALLPATH" struct --dump "$WORK/probe"
FUNCS="work tailer tail_target path_a"
pats=() subs=()
for f in $FUNCS; do
	a=$(addr "$CP_WORKLOADS/probe.O2" "$f")
	[ -n "$a" ] || fail "no symbol $f in probe.O2"
	grep -q "procedure sub_$a entry 0x$a " "$WORK/run.out" ||
		fail "struct of the stripped copy has no sub_$a for $f: $(grep -c procedure "$WORK/run.out") procedures"
	pats+=(-f "$f") subs+=(-f "sub_$a")
done

# paths_of DIR FROM-NM: calls per calling context from the report (procedures only, each
# sub_HEX named as nm names HEX in FROM-NM), sorted.
paths_of() {
	"$CALLPATH" report "$1" --metric calls --threshold 0 --format json >"$1.json" 2>"$1.err" ||
		fail "report $1: $(cat "$1.err")"
	python3 - "$1.json" "$2" <<'PY'
import json, subprocess, sys
names = {}
for line in subprocess.run(["nm", sys.argv[2]], capture_output=True, text=True).stdout.splitlines():
    p = line.split()
    if len(p) == 3 and p[1] in "tT":
        names["sub_%x" % int(p[0], 16)] = p[2]
nodes = {n["id"]: n for n in json.load(open(sys.argv[1]))["nodes"]}
for n in nodes.values():
    if n["kind"] != "procedure" or not n["exclusive"][0]:
        continue
    path, m = [], n
    while m["parent"] is not None:
        if m["kind"] == "procedure":
            path.append(names.get(m["name"], m["name"]))
        m = nodes[m["parent"]]
    print(" > ".join(reversed(path)), n["exclusive"][0], sep="\t")
PY
}

want=$("$WORK/probe" paths)
run "$CALLPATH" probe -q -o "$WORK/ref" "${pats[@]}" -- "$CP_WORKLOADS/probe.O2" paths
run "$CALLPATH" probe -q -o "$WORK/str" "${subs[@]}" -- "$WORK/probe" paths
grep -qx "$want" "$WORK/run.out" || fail "output changed: $(cat "$WORK/run.out")"
paths_of "$WORK/ref" "$CP_WORKLOADS/probe.O2" | sort >"$WORK/ref.paths"
paths_of "$WORK/str" "$CP_WORKLOADS/probe.O2" | sort >"$WORK/str.paths"
grep -q "path_a > work	1000$" "$WORK/ref.paths" || fail "reference: $(cat "$WORK/ref.paths")"
cmp -s "$WORK/ref.paths" "$WORK/str.paths" ||
	fail "calls per context differ (unstripped by name, stripped by sub_HEX):
$(diff "$WORK/ref.paths" "$WORK/str.paths")"
"$CALLPATH" report "$WORK/str" 2>&1 | grep -q "^probes: *4 functions probed, 0 refused" ||
	fail "summary: $("$CALLPATH" report "$WORK/str" 2>&1 | grep -E 'probes:|note')"
# the report names the probed functions (those with calls) as struct does: sub_HEX
python3 - "$WORK/str.json" "${subs[@]}" <<'PY' || fail "the report's names of the probed functions"
import json, sys
got = {n["name"] for n in json.load(open(sys.argv[1]))["nodes"]
       if n["kind"] == "procedure" and n["exclusive"][0]}
want = set(sys.argv[2:]) - {"-f"}
if got != want:
    print("report:", sorted(got), "struct:", sorted(want)); sys.exit(1)
PY

# Refusals: the entry point (stripped _start) and an address inside a function.
w=$(addr "$CP_WORKLOADS/probe.O2" work)
s=$(addr "$CP_WORKLOADS/probe.O2" _start)
inside=$(printf '%x' $((0x$w + 1)))
run "$CALLPATH" probe -o "$WORK/ref2" -f "sub_$s" -f "probe:sub_$inside" -- "$WORK/probe" paths
"$CALLPATH" report "$WORK/ref2" >"$WORK/ref2.txt" 2>&1
grep -q "probe sub_$s in .* not installed: program entry point" "$WORK/ref2.txt" ||
	fail "stripped _start not refused: $(grep -E 'note|probes:' "$WORK/ref2.txt")"
grep -q "probe sub_$inside in .* not installed: no function starts there" "$WORK/ref2.txt" ||
	fail "sub_$inside not refused: $(grep -E 'note|probes:' "$WORK/ref2.txt")"

# probe --list says the same, offline
"$CALLPATH" probe --list -f "sub_$w" -f "sub_$s" -f "probe:sub_$inside" "$WORK/probe" >"$WORK/list" 2>&1
grep -q "^probe	sub_$w	0x$w	[0-9]*	probe	" "$WORK/list" &&
	grep -q "^probe	sub_$s	0x$s	.*refused: program entry point" "$WORK/list" &&
	grep -q "^probe	sub_$inside	0x$inside	0	refused: no function starts there" "$WORK/list" ||
	fail "probe --list: $(cat "$WORK/list")"

# Loop probes on sub_HEX through the control channel, against the program's counters.
rm -f "$WORK/pid" "$WORK/go"
"$CALLPATH" probe --loops -q -o "$WORK/loops.m" -f no_such_function -- \
	"$WORK/loops" "$WORK/pid" "$WORK/go" >"$WORK/loops.prog" 2>"$WORK/loops.err" &
bg=$!
wait_for_pid "$WORK/pid"
args=()
for f in for_loop nested tiny; do args+=(--add-loops "sub_$(addr "$CP_WORKLOADS/loops.O2" $f)"); done
"$CALLPATH" probe --pid "$(cat "$WORK/pid")" "${args[@]}" >"$WORK/loops.add" 2>&1
st=$?
touch "$WORK/go"
wait "$bg" || fail "the loops run failed: $(cat "$WORK/loops.err")"
[ $st = 0 ] || fail "--add-loops sub_HEX: $(cat "$WORK/loops.add")"
python3 "$CP_SOURCE_DIR/tests/e2e/loop-tree.py" "$WORK/loops.m" >"$WORK/loops.got" ||
	fail "cannot read the loops"
# rotated loops at -O2: iterations equal the body's runs (probe-loops.sh); nested: outer first
python3 - "$WORK/loops.prog" "$WORK/loops.got" "$CP_WORKLOADS/loops.O2" <<'PY' ||
import subprocess, sys
syms = sorted((int(p[0], 16), p[2]) for p in (l.split() for l in subprocess.run(
    ["nm", sys.argv[3]], capture_output=True, text=True).stdout.splitlines())
    if len(p) == 3 and p[1] in "tT")
def func(a):
    return max((s for s in syms if s[0] <= a), default=(0, "?"))[1]
got = {}
for l in open(sys.argv[2]):
    _, hdr, it, en, ns = l.split("\t")
    got.setdefault(func(int(hdr, 16)), []).append((int(en), int(it)))
want = {}
for name, body, entries in (l.split() for l in open(sys.argv[1])):
    if name in ("for_loop", "nested", "tiny"):
        want.setdefault(name, []).append(int(body))
bad = 0
for name, bodies in want.items():
    its = [it for _, it in sorted(got.get(name, []))]  # an outer loop has fewer entries
    if its != bodies:
        print(name, "program", bodies, "probes", its); bad = 1
sys.exit(bad)
PY
	fail "loop iteration counts: $(cat "$WORK/loops.add" "$WORK/loops.got")"
note "ok: $(wc -l <"$WORK/str.paths") contexts equal, $(wc -l <"$WORK/loops.got") loops exact"
