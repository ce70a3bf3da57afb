#!/bin/bash
# callpath_stop()/callpath_start(): samples are taken only between start and stop; the
# same program runs unchanged without callpath (weak references, null outside).
source "$(dirname "$0")/lib.sh"
require_tool cc
cat >"$WORK/api.c" <<'C'
#include <stdio.h>
extern void callpath_start(void) __attribute__((weak));
extern void callpath_stop(void) __attribute__((weak));
volatile unsigned long sink;
/* One function for both halves: two copies of the loop can differ 2x in speed (code
 * alignment), which made the half-and-half check below flaky. */
__attribute__((noinline)) void work(void) { for (unsigned long i = 0; i < 400000000ul; i++) sink += i; }
int main(void)
{
	if (callpath_stop)
		callpath_stop();
	work(); /* not measured */
	if (callpath_start)
		callpath_start();
	work(); /* measured */
	printf("api %s\n", callpath_start ? "linked" : "absent");
	return 0;
}
C
cc -O1 -g -o "$WORK/api" "$WORK/api.c" || fail "cannot compile helper"
"$WORK/api" | grep -q "api absent" || fail "without callpath the API must be absent"
run "$CALLPATH" record -q -o "$WORK/m" -- "$WORK/api"
grep -q "api linked" "$WORK/run.out" || fail "API not resolved from the runtime"
python3 "$CP_SOURCE_DIR/tests/e2e/record-check.py" "$WORK/m" >"$WORK/m.json" || fail "invalid files"
python3 - "$WORK/m.json" <<'PY' || fail "sampling not limited to start..stop"
import json, sys
d = json.load(open(sys.argv[1]))
t = d["threads"][0]
cpu_s = t["cpu_ns"] / 1e9
taken = t["samples"][0] / 1000
print("cpu", cpu_s, "sampled s", taken, "dropped", t["dropped"])
# Half the CPU time ran stopped: about half the samples are taken, the rest dropped.
assert 0.3 < taken / cpu_s < 0.7, (taken, cpu_s)
assert t["dropped"] > 0.3 * t["samples"][0]
PY
exit 0
