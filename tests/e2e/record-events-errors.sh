#!/bin/bash
# Event errors are caught before the program runs, with the exact messages users get:
# unknown event (close names offered), bad period, a hardware event on a machine without
# hardware counters, too many events; nothing is created and the program does not run.
# --list-events lists generic, software and PMU events, marking what cannot be counted.
source "$(dirname "$0")/lib.sh"
cd "$WORK"
expect() { # WANT-LINE ARGS...: record fails with exit 2, first line of stderr is WANT-LINE
	local want=$1
	shift
	"$CALLPATH" record "$@" -- touch ran >out 2>&1
	local rc=$?
	[ $rc = 2 ] || fail "record $*: exit $rc, want 2: $(cat out)"
	[ "$(head -1 out)" = "$want" ] || fail "record $*: got '$(head -1 out)', want '$want'"
	[ ! -e ran ] || fail "record $*: the program ran"
}
expect "callpath record: unknown event 'nosuch-event'; known events:" -e nosuch-event
grep -q "cputime" out && grep -q -- "--list-events" out || fail "unknown event: no list: $(cat out)"
"$CALLPATH" record -e cyclez -- true >out 2>&1
head -1 out | grep -q "^callpath record: unknown event 'cyclez' (did you mean: cycles[,?]" ||
	fail "no close name for cyclez: $(head -1 out)"
"$CALLPATH" record -e page-fault -- true >out 2>&1
head -1 out | grep -q "(did you mean: .*page-faults" || fail "no close name for page-fault: $(head -1 out)"
expect "callpath record: bad period '0' for page-faults: give a count of events per sample of at least 1, or fN for N samples per second (e.g. page-faults@10, page-faults@f1000)" \
	-e page-faults@0
expect "callpath record: bad period 'fast' for cpu-clock: give nanoseconds (a number with an optional ns/us/ms/s suffix) of at least 10000, or fN for N samples per second (e.g. cpu-clock@500us, cpu-clock@f1000)" \
	-e cpu-clock@fast
expect "callpath record: bad period 'f0' for task-clock: give nanoseconds (a number with an optional ns/us/ms/s suffix) of at least 10000, or fN for N samples per second (e.g. task-clock@500us, task-clock@f1000)" \
	-e task-clock@f0
expect "callpath record: bad period '10ms' for page-faults: give a count of events per sample of at least 1, or fN for N samples per second (e.g. page-faults@10, page-faults@f1000)" \
	-e page-faults@10ms
expect "callpath record: bad period '10' for cycles: give a count of events per sample of at least 1000, or fN for N samples per second (e.g. cycles@10000, cycles@f1000)" \
	-e cycles@10
"$CALLPATH" record -e PAPI_FP_OPS -- true >out 2>&1 && fail "PAPI_FP_OPS accepted"
head -1 out | grep -q "^callpath record: unknown event 'PAPI_FP_OPS': callpath does not use PAPI; the PAPI presets it knows are aliases of perf events (PAPI_TOT_CYC," ||
	fail "PAPI_FP_OPS: $(head -1 out)"
many=()
for i in $(seq 17); do many+=(-e "r$i"); done
expect "callpath record: at most 16 events" "${many[@]}"
expect "callpath record: event 'cycles' given twice ('PAPI_TOT_CYC' is an alias)" -e cycles -e PAPI_TOT_CYC
expect "callpath record: event 'page-faults' given twice" -e page-faults@10 -e page-faults
[ -z "$(ls -d callpath-* 2>/dev/null)" ] || fail "a measurement directory was created"

# Hardware events: on a machine without a PMU (VMs), the exact advice; with one, they open.
if [ ! -e /sys/bus/event_source/devices/cpu ] && [ ! -e /sys/bus/event_source/devices/cpu_core ]; then
	nopmu="this machine exposes no hardware performance counters (a VM?); use a software event such as cpu-clock or task-clock"
	expect "callpath record: cannot open event 'cycles': $nopmu" -e cycles
	expect "callpath record: cannot open event 'instructions': $nopmu" -e cpu-clock -e instructions
	expect "callpath record: cannot open event 'r01c2': $nopmu" -e r01c2
	expect "callpath record: cannot open event 'cycles': $nopmu" -e PAPI_TOT_CYC
	expect "callpath record: cannot open event 'LLC-load-misses': $nopmu" -e LLC-load-misses
	"$CALLPATH" record --list-events >list 2>&1 || fail "--list-events failed"
	grep -q "^  cycles .*\[no hardware counters here\]" list || fail "cycles not marked: $(grep cycles list)"
else
	note "this machine has a PMU: the no-PMU message is not checked (record-events-pmu covers it)"
	"$CALLPATH" record --list-events >list 2>&1 || fail "--list-events failed"
fi
grep -q "^  page-faults  *@100 " list || fail "page-faults not listed: $(cat list)"
grep "^  cpu-clock " list | grep -q "\[" && fail "cpu-clock marked unusable: $(grep cpu-clock list)"
grep -q "^PMU events (libpfm4" list || grep -q "built without libpfm4" list || fail "no PMU section"
"$CALLPATH" record --list-events=fault >flist 2>&1 || fail "--list-events=fault failed"
grep -q "^  page-faults " flist && grep -q "^  minor-faults " flist || fail "filter lost page-faults"
grep -q "^  instructions \|^  cputime " flist && fail "filter kept unrelated events: $(cat flist)"

# The runtime refuses a malformed spec by itself (CALLPATH_EVENTS set by hand).
CALLPATH_OUTPUT=$WORK/rt CALLPATH_EVENTS=page-faults@x LD_PRELOAD=$CP_BUILD_DIR/libcallpath-rt.so \
	/bin/true 2>rt.err || fail "the program failed with a bad spec"
grep -q "bad event 'page-faults@x'" rt.err || fail "runtime accepted page-faults@x: $(cat rt.err)"
note "ok"
