#!/bin/bash
# Every function of libc and of the program probed at once (the runtime itself calls libc
# while it measures: mmap, the unwinder, clock_gettime): no recursion, no crash, output
# unchanged, in the threaded, malloc, longjmp, signal, fork and C++-exception workloads.
. "$(dirname "$0")/lib.sh"
wl=$CP_WORKLOADS/probe.O2
for mode in paths threads malloc longjmp signal fork; do
	want=$("$wl" $mode)
	run timeout 120 "$CALLPATH" probe -q -o "$WORK/m-$mode" -f 'libc.so*:*' -f 'probe.O2:*' -- "$wl" $mode
	grep -qx "$want" "$WORK/run.out" || fail "$mode: output changed: $(cat "$WORK/run.out")"
done
python3 "$CP_SOURCE_DIR/tests/e2e/probe-tree.py" "$WORK/m-paths" 'main > path_b > work=3000' ||
	fail "counts with everything probed"
want=$("$CP_WORKLOADS/probe-throw.O2")
run timeout 120 "$CALLPATH" probe -q -o "$WORK/m-throw" -f 'libc.so*:*' -f 'libstdc++*:*' \
	-f 'probe-throw.O2:*' -- "$CP_WORKLOADS/probe-throw.O2"
grep -qx "$want" "$WORK/run.out" || fail "throw: output changed: $(cat "$WORK/run.out")"
note "ok"
