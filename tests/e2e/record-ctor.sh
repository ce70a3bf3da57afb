#!/bin/bash
# Samples taken in a library constructor that the dynamic loader runs after the runtime's
# own (the runtime's start-up is one) unwind completely: their outermost frame is the
# loader's start-up code (_dl_start_user -> _dl_init), which has no CFI. libctorwork.so is
# preloaded before the runtime, so its constructor runs after the runtime's and does about
# 100 ms of CPU work, all of it sampled, in a program that does nothing else.
source "$(dirname "$0")/lib.sh"
CHECK="python3 $CP_SOURCE_DIR/tests/e2e/record-check.py"
lib=$CP_WORKLOADS/libctorwork.so prog=$CP_WORKLOADS/threads.O2
require_built "$lib" "$prog" "$CP_BUILD_DIR/libcallpath-rt.so"
mkdir "$WORK/m"
CTORWORK_UNITS=100000000 CALLPATH_OUTPUT=$WORK/m LD_PRELOAD=$lib:$CP_BUILD_DIR/libcallpath-rt.so \
	"$prog" 0 >"$WORK/out" 2>&1 || fail "the program failed: $(cat "$WORK/out")"
$CHECK "$WORK/m" >"$WORK/m.json" || fail "measurement invalid"
"$CALLPATH" report "$WORK/m" --format json --threshold 0 >"$WORK/r.json" 2>"$WORK/err" ||
	fail "report: $(cat "$WORK/err")"
python3 - "$WORK/m.json" "$WORK/r.json" "$TEST_NAME" <<'PY' || fail "see the measured values above"
import json, sys
t = json.load(open(sys.argv[1]))["threads"][0]
r = json.load(open(sys.argv[2]))
incl = sum(n["inclusive"][0] for n in r["nodes"] if n["kind"] == "procedure" and n["name"] == "ctorwork_init")
share = incl / r["nodes"][0]["inclusive"][0]
s = t["samples"][0]
print("main thread: %d samples, %d complete, %d partial, %d failed; ctorwork_init %.2f of the total"
      % (s, t["complete"], t["partial"], t["failed"], share))
ok = True
for cond, msg in [(s > 30, "more than 30 samples"), (share > 0.5, "the constructor holds > 50 %"),
                  (t["complete"] >= 0.99 * s, "99 % complete unwinds")]:
    if not cond:
        print("FAIL [%s]: %s" % (sys.argv[3], msg), file=sys.stderr)
        ok = False
sys.exit(0 if ok else 1)
PY
exit 0
