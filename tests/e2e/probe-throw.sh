#!/bin/bash
# callpath probe on C++ functions an exception passes through: the unwinder finds the real
# return addresses (no std::terminate), every call is counted, later calls are counted in
# the right context, the output is unchanged.
. "$(dirname "$0")/lib.sh"
TREE="$CP_SOURCE_DIR/tests/e2e/probe-tree.py"
wl=$CP_WORKLOADS/probe-throw.O2
want=$("$wl")
run "$CALLPATH" probe -q -o "$WORK/m" -f '_Z7throweri' -f '_Z6middlei' -f '_Z5afteri' -- "$wl"
grep -qx "$want" "$WORK/run.out" || fail "output changed: $(cat "$WORK/run.out")"
python3 "$TREE" "$WORK/m" 'main > _Z6middlei=300' 'main > _Z6middlei > _Z7throweri=300' \
	'main > _Z5afteri=50' || fail "counts"
note "ok"
