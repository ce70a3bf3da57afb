#!/bin/bash
# callpath search with loop probes for ExcessiveSyncWaiting (docs/cmd-search.md): loopwait's
# work() waits on a condition variable inside its loop. The search refines work into its
# loops and relocates it (loop probes: the measurement counts loop iterations, though only
# the wait hypothesis runs); the wait samples taken in the copy still unwind completely, so
# the loops holding the wait are found true, at loop precision, in the top 3. The inner
# loop runs 100 iterations a round, so the loop probes' predicted cost stays under the 5 %
# limit (with 1000 it was predicted at 6-7 % with this machine's calibrated costs, and the
# probes were rightly not inserted).
. "$(dirname "$0")/lib.sh"
require_built "$CALLPATH" "$CP_WORKLOADS/loopwait.O2"
src=$CP_SOURCE_DIR/tests/workloads/loopwait.c
outer=$(grep -n "for (int i = 0; i < n; i++) {" "$src" | cut -d: -f1)
wait=$(grep -n "while (ticks == t)" "$src" | cut -d: -f1)
run "$CALLPATH" search -q --after 0.3 --for 8 --kill --hypotheses ExcessiveSyncWaiting \
	--format json -o "$WORK/m" -- "$CP_WORKLOADS/loopwait.O2" - - 20 100
cp "$WORK/run.out" "$WORK/r.json"
json_assert "$WORK/r.json" "(any(b['kind'] == 'loop' and b['function'] == 'work'
    and $outer <= b['line'] <= $wait + 1 for b in d['bottlenecks'][:3]))" \
	"no loop of work (lines $outer-$((wait + 1))) in the top 3: $(head -c 3000 "$WORK/r.json")"
"$CALLPATH" report "$WORK/m" --metric loop-iterations --format json >"$WORK/rep.json" ||
	fail "report"
json_assert "$WORK/rep.json" "d['nodes'][0]['inclusive'][[m['name'] for m in d['metrics']].index(
    'loop-iterations')] > 0" "no loop probes were inserted for the wait hypothesis"
json_assert "$WORK/rep.json" "(lambda u: u['complete'] >= 0.99 * (u['complete'] + u['partial']
    + u['failed']))(d['summary']['unwind'])" \
	"unwinds through the copy: $(python3 -c "import json; print(json.load(open('$WORK/rep.json'))['summary']['unwind'])")"
note "ok"
