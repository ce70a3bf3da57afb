#!/bin/bash
# Samples through a relocated function (loop probes, docs/internals/patch.md "Unwinding
# through a copy"): loopwait's work() is relocated while it runs; its loop waits on a
# condition variable itself (the wait trigger's call site is in the copy), calls burn()
# (CPU time below the copy) and runs a short inner loop (timer samples in the copy and in
# its edge snippets and their handler). Every sample must unwind completely (>= 99 %),
# and the wait time and burn()'s CPU time must land under work's loop, as without probes.
. "$(dirname "$0")/lib.sh"
require_built "$CALLPATH" "$CP_WORKLOADS/loopwait.O2" "$CP_WORKLOADS/loopwait.O0"

measure() { # VARIANT
	local v=$1
	rm -f "$WORK/pid" "$WORK/go"
	"$CALLPATH" probe --loops -q -o "$WORK/$v" -f no_such_function -e wait -e cputime -- \
		"$CP_WORKLOADS/loopwait.$v" "$WORK/pid" "$WORK/go" 1.5 >"$WORK/$v.prog" 2>"$WORK/$v.err" &
	local bg=$!
	wait_for_pid "$WORK/pid"
	"$CALLPATH" probe --pid "$(cat "$WORK/pid")" --add-loops work --add burn >"$WORK/$v.add" 2>&1
	local st=$?
	touch "$WORK/go"
	wait "$bg" || fail "$v: the run failed: $(cat "$WORK/$v.err")"
	[ $st = 0 ] || fail "$v: --add-loops: $(cat "$WORK/$v.add")"
	"$CALLPATH" report "$WORK/$v" --metric wait-time,cputime,loop-iterations --format json \
		>"$WORK/$v.json" 2>"$WORK/$v.rerr" || fail "$v: report: $(cat "$WORK/$v.rerr")"
}

check() { # VARIANT
	python3 - "$WORK/$1.json" "$1" <<'PY' || fail "$1: see above"
import json, sys
d = json.load(open(sys.argv[1]))
nodes = {n["id"]: n for n in d["nodes"]}
names = [m["name"] for m in d["metrics"]]
W, C, L = (names.index(m) for m in ("wait-time", "cputime", "loop-iterations"))
u = d["summary"]["unwind"]
total = u["complete"] + u["partial"] + u["failed"]
bad = []
def ancestors(n):
    while n["parent"] is not None:
        n = nodes[n["parent"]]
        yield n
def under_work_loop(n):  # below a loop node directly in procedure work
    return any(a["kind"] == "loop" and nodes[a["parent"]]["name"] == "work" for a in ancestors(n)) \
        or (n["kind"] == "loop" and nodes[n["parent"]]["name"] == "work")
root = nodes[0]
if root["inclusive"][L] == 0:
    bad.append("no loop iterations counted: the copy never ran")
if u["complete"] < 0.99 * total:
    bad.append("unwinds %d complete of %d" % (u["complete"], total))
# Wait time: most of it in work (the rest is the final join), all of that in its loops.
work = [n for n in d["nodes"] if n["kind"] == "procedure" and n["name"] == "work"]
ww = sum(n["inclusive"][W] for n in work)
tops = [n for n in d["nodes"] if n["kind"] == "loop" and n["parent"] is not None
        and nodes[n["parent"]]["name"] == "work"]
wl = sum(n["inclusive"][W] for n in tops)
if ww < 0.5 * root["inclusive"][W] or wl < 0.99 * ww:
    bad.append("wait time %.3f s, in work %.3f s, under its loops %.3f s"
               % (root["inclusive"][W] / 1e9, ww / 1e9, wl / 1e9))
# burn's CPU time: all of it below work's loop.
burn = [n for n in d["nodes"] if n["kind"] == "procedure" and n["name"] == "burn"]
bt = sum(n["inclusive"][C] for n in burn)
bl = sum(n["inclusive"][C] for n in burn if under_work_loop(n))
if not bt or bl < 0.99 * bt:
    bad.append("burn's CPU time under work's loop %d of %d ns" % (bl, bt))
print("%s: %d samples, %.2f %% complete; wait under work's loops %.1f %%; burn %.1f %% under it"
      % (sys.argv[2], total, 100.0 * u["complete"] / max(total, 1),
         100.0 * wl / max(ww, 1), 100.0 * bl / max(bt, 1)))
for b in bad:
    print(sys.argv[2] + ": " + b)
sys.exit(1 if bad else 0)
PY
}

for v in O2 O0; do
	measure $v
	check $v
done
note "ok"
