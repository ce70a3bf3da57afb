#!/bin/bash
# callpath probe in a shared library linked at start, in one dlopen'd later, and on a
# static function named `helper` in both the executable and the library: two distinct
# probes with their own counts; MODULE:GLOB restricts a pattern to one module.
. "$(dirname "$0")/lib.sh"
TREE="$CP_SOURCE_DIR/tests/e2e/probe-tree.py"
wl=$CP_WORKLOADS/probe.O2
want=$("$wl" libs "$CP_WORKLOADS")
run "$CALLPATH" probe -q -o "$WORK/m" -f lib_work -f helper -f dl_work -- "$wl" libs "$CP_WORKLOADS"
grep -qx "$want" "$WORK/run.out" || fail "output changed"
python3 "$TREE" "$WORK/m" 'main > lib_work=300' 'main > helper=11' \
	'main > lib_helpers > helper=13' 'main > dl_work=17' || fail "counts"
run "$CALLPATH" probe -q -o "$WORK/m2" -f 'lib-probe.so:helper' -- "$wl" libs "$CP_WORKLOADS"
python3 "$TREE" "$WORK/m2" 'main > helper=0' 'main > lib_helpers > helper=13' ||
	fail "module-qualified pattern"
note "ok"
