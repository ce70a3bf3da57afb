#!/bin/bash
# Loop probes (docs/cmd-probe.md "Loop probes"): `callpath probe --pid P --add-loops F`
# relocates F with snippets on its loops' entry, back and exit edges while it runs.
# The counts are checked against the program's own counters, for a for, a while and a
# do loop, nested loops, a loop with three exits, one with a continue, and a loop of three
# instructions (no block of it could hold a jump: only relocation instruments it), and a
# function of 150 loops whose plan (~6 KB) is longer than a control request line: it goes
# through a file (`loops-file`, format/control.h).
# At -O0 the compiled loops are the source's: entries are exact, and iterations (times the
# header runs) are the body's runs, plus one per entry where the test is at the top.
# A probed function called inside a relocated loop keeps its full calling context.
# At -O2 the loops are rotated (the test at the bottom, a guard before): iterations equal
# the body's runs exactly; `exits` is left out there, GCC peels its first iteration.
. "$(dirname "$0")/lib.sh"
LOOPS="$CP_SOURCE_DIR/tests/e2e/loop-tree.py"
require_built "$CALLPATH" "$CP_WORKLOADS/loops.O0" "$CP_WORKLOADS/loops.O2"
FUNCS="for_loop while_loop do_loop nested nested3 exits cont tiny many_loops"

measure() { # VARIANT: runs the workload, inserts the loop probes while it waits
	local v=$1 args=() f
	rm -f "$WORK/pid" "$WORK/go"
	"$CALLPATH" probe --loops -q -o "$WORK/$v" -f no_such_function -- \
		"$CP_WORKLOADS/loops.$v" "$WORK/pid" "$WORK/go" >"$WORK/$v.prog" 2>"$WORK/$v.err" &
	local bg=$!
	wait_for_pid "$WORK/pid"
	for f in $FUNCS calls_in_loop; do args+=(--add-loops "$f"); done
	args+=(--add callee)
	"$CALLPATH" probe --pid "$(cat "$WORK/pid")" "${args[@]}" >"$WORK/$v.add" 2>&1
	local st=$?
	touch "$WORK/go"
	wait "$bg" || fail "$v: the run failed: $(cat "$WORK/$v.err")"
	[ $st = 0 ] || fail "$v: --add-loops: $(cat "$WORK/$v.add")"
	python3 "$LOOPS" "$WORK/$v" >"$WORK/$v.loops" || fail "$v: cannot read the loops"
}

# check VARIANT MODE: each program loop (NAME BODY ENTRIES, in order per name) against the
# probes' loops of that function (by header address); nested's outer loop comes first.
check() {
	python3 - "$WORK/$1.prog" "$WORK/$1.loops" "$2" <<'PY' || fail "$1: $(cat "$WORK/$1.loops")"
import sys
prog = [l.split() for l in open(sys.argv[1])]
got = {}
for l in open(sys.argv[2]):
    fn, hdr, it, en, ns = l.split("\t")
    got.setdefault(fn, []).append((int(hdr, 16), int(it), int(en), int(ns)))
mode, bad, seen = sys.argv[3], 0, {}
for name, body, entries in prog:
    body, entries = int(body), int(entries)
    if mode == "O2" and name == "exits":
        continue
    k = seen.get(name, 0)
    seen[name] = k + 1
    loops = sorted(got.get(name, []))
    if name.startswith("nested"):  # an outer loop is entered fewer times than its inner
        loops.sort(key=lambda x: x[2])
    if k >= len(loops):
        print("%s: loop %d has no probe counts" % (name, k)); bad = 1; continue
    _, it, en, ns = loops[k]
    if mode == "O0":
        ok = en == entries and it in (body, body + entries)
    else:
        ok = it == body and 0 < en <= entries
    if not ok or ns <= 0:
        print("%s loop %d: program body %d entries %d; probes %d iterations, %d entries, %d ns"
              % (name, k, body, entries, it, en, ns)); bad = 1
sys.exit(bad)
PY
}

# callee, called 163 times from the relocated calls_in_loop: its context passes through
# the copy (the unwinder maps the copy's return addresses back to the original).
callee_path() {
	python3 "$CP_SOURCE_DIR/tests/e2e/probe-tree.py" "$WORK/$1" 'main > calls_in_loop > callee=163' ||
		fail "$1: callee's context does not pass through the relocated calls_in_loop"
}

# The report's exclusive loop counts are each loop's own (an outer loop does not add its
# nested loops' iterations, entries and time): they equal the probes' raw counts per loop.
report_own() {
	"$CALLPATH" report "$WORK/$1" --metric loop-iterations,loop-entries,loop-time \
		--format json >"$WORK/$1.json" 2>"$WORK/$1.rerr" || fail "$1: report: $(cat "$WORK/$1.rerr")"
	python3 - "$WORK/$1.json" "$WORK/$1.loops" <<'PY' || fail "$1: report's loop counts differ"
import json, sys
d = json.load(open(sys.argv[1]))
rep = sorted(tuple(n["exclusive"][-3:-1]) for n in d["nodes"]
             if n["kind"] == "loop" and n["exclusive"][-3])
raw = sorted((int(l.split("\t")[2]), int(l.split("\t")[3])) for l in open(sys.argv[2]))
if rep != raw:
    print("report (iterations, entries) per loop:", rep, "\nprobes:", raw); sys.exit(1)
PY
}

measure O0
check O0 O0
report_own O0
callee_path O0
measure O2
check O2 O2
report_own O2
callee_path O2
grep -q "^loops tiny: 1 loops" "$WORK/O2.add" || fail "tiny: $(cat "$WORK/O2.add")"
grep -q "^loops many_loops: 150 loops" "$WORK/O2.add" || fail "many_loops: $(cat "$WORK/O2.add")"
[ -z "$(ls -A "$WORK/O2" | grep '^\.loops-')" ] || fail "the plan file was left behind"
note "ok: $(wc -l <"$WORK/O0.loops") loops at -O0, $(wc -l <"$WORK/O2.loops") at -O2, counts match"
