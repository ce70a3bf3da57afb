#!/bin/bash
# callpath probe: exact call counts per calling context in the executable (-O2 and -O0):
# two callers, a call through a pointer, a tail call; the program's output is unchanged.
. "$(dirname "$0")/lib.sh"
TREE="$CP_SOURCE_DIR/tests/e2e/probe-tree.py"
for v in O2 O0; do
	wl=$CP_WORKLOADS/probe.$v
	want=$("$wl" paths)
	run "$CALLPATH" probe -q -o "$WORK/m$v" -f work -f tailer -f tail_target -- "$wl" paths
	grep -qx "$want" "$WORK/run.out" || fail "$v: output changed: $(cat "$WORK/run.out")"
	python3 "$TREE" "$WORK/m$v" 'main > path_a > work=1000' 'main > path_b > work=3000' \
		'main > path_ptr > work=500' 'main > tailer=200' 'tail_target=200' ||
		fail "$v: call counts per path"
done
# At -O2 tailer ends in a jmp to tail_target (a real tail call): the callee is counted
# in tailer's context (beside it, under main's call site), not under a caller of its own.
objdump -d "$CP_WORKLOADS/probe.O2" | grep -A3 '<tailer>:' | grep -q 'jmp.*<tail_target>' ||
	fail "tailer is not a tail call at -O2"
python3 "$TREE" "$WORK/mO2" 'main > tail_target=200' || fail "tail-called function's context"
# Probe time: the 4000 calls of work cost less than path_b's 3000 + path_a's 1000 total time;
# every probed context has a time.
python3 "$TREE" "$WORK/mO2" | awk -F'\t' '$4 == 0 { exit 1 }' || fail "a context without probe-time"
note "ok"
