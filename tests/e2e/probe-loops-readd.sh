#!/bin/bash
# Loop probes added and removed again and again (as `callpath search` does when experiments
# on a function's loops come and go): 300 cycles of --add-loops work / --remove work, then
# --add-loops work once more. The same request for the same function enters the copy made
# the first time again instead of relocating anew (there is room for 256 relocated
# functions per process, and copies are never unmapped), so every cycle succeeds; the
# loops then count and samples unwind through the copy.
. "$(dirname "$0")/lib.sh"
require_built "$CALLPATH" "$CP_WORKLOADS/loopwait.O2"
"$CALLPATH" probe --loops -q -o "$WORK/m" -f no_such_function -e cputime -- \
	"$CP_WORKLOADS/loopwait.O2" "$WORK/pid" "$WORK/go" 0.5 >"$WORK/prog" 2>"$WORK/err" &
bg=$!
wait_for_pid "$WORK/pid"
args=()
for _ in $(seq 300); do args+=(--add-loops work --remove work); done
"$CALLPATH" probe --pid "$(cat "$WORK/pid")" "${args[@]}" --add-loops work >"$WORK/add" 2>&1
st=$?
touch "$WORK/go"
wait "$bg" || fail "the run failed: $(cat "$WORK/err")"
[ $st = 0 ] || fail "add/remove cycles: $(grep -v '^loops work: 3 loops\|^remove work: 1' "$WORK/add" | head -3)"
[ "$(grep -c '^loops work: 3 loops' "$WORK/add")" = 301 ] || fail "$(sort "$WORK/add" | uniq -c)"
"$CALLPATH" report "$WORK/m" --metric loop-iterations --format json >"$WORK/rep.json" ||
	fail "report"
json_assert "$WORK/rep.json" "d['nodes'][0]['inclusive'][[m['name'] for m in d['metrics']].index(
    'loop-iterations')] > 0" "the loops counted nothing"
json_assert "$WORK/rep.json" "(lambda u: u['complete'] >= 0.99 * (u['complete'] + u['partial']
    + u['failed']))(d['summary']['unwind'])" "unwinds through the copy"
note "ok"
