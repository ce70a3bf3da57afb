#!/bin/bash
# callpath search refuses what it cannot do before starting the program: an unknown
# hypothesis (exit 2, the known ones listed), a bad threshold, no program.
. "$(dirname "$0")/lib.sh"
require_built "$CALLPATH" "$CP_WORKLOADS/search-loops.O2"
"$CALLPATH" search --hypotheses CPUBound,Foo -o "$WORK/m" -- "$CP_WORKLOADS/search-loops.O2" 1 \
	>"$WORK/out" 2>"$WORK/err"
[ $? = 2 ] || fail "unknown hypothesis: exit status $?"
grep -q "unknown hypothesis 'Foo' (known: CPUBound, ExcessiveSyncWaiting" "$WORK/err" ||
	fail "message: $(cat "$WORK/err")"
[ ! -e "$WORK/m" ] || fail "the program was started"
"$CALLPATH" search --threshold 0 -- true 2>"$WORK/err"
[ $? = 2 ] && grep -q "invalid value '0' for --threshold" "$WORK/err" || fail "threshold 0"
"$CALLPATH" search 2>"$WORK/err"
[ $? = 2 ] && grep -q "no program given" "$WORK/err" || fail "no program"
note "ok"
