#!/bin/bash
# perf events as an unprivileged user, whatever /proc/sys/kernel/perf_event_paranoid says:
#   >= 3 (Debian's default): refused before the program runs, with the advice to set it;
#   2: counted in user mode only, with a NOTE saying so (faults and CPU time still land in
#      the right function); <= 1: counted, no NOTE.
# Needs root to drop to user nobody (setpriv); skipped otherwise. nobody may not be able to
# enter the source or build tree (a clone in /root is mode 700 on Debian), so callpath, its
# runtime and the workload are copied into the world-readable work directory first.
source "$(dirname "$0")/lib.sh"
require_built "$CALLPATH" "$CP_BUILD_DIR/libcallpath-rt.so" "$CP_WORKLOADS/touch.O2"
[ "$(id -u)" = 0 ] || skip "needs root to run the test as user nobody"
require_tool setpriv
level=$(cat /proc/sys/kernel/perf_event_paranoid)
chmod 755 "$WORK"
mkdir -m 755 "$WORK/bin"
cp "$CALLPATH" "$CP_BUILD_DIR/libcallpath-rt.so" "$CP_WORKLOADS/touch.O2" "$WORK/bin/"
CALLPATH=$WORK/bin/callpath
prog=$WORK/bin/touch.O2
mkdir -m 777 "$WORK/out"
as_nobody() {
	(cd "$WORK/out" && setpriv --reuid=65534 --regid=65534 --clear-groups "$@")
}
as_nobody "$CALLPATH" record -q -e page-faults@16 -e cpu-clock -o "$WORK/out/m" -- "$prog" 8 \
	>"$WORK/out.txt" 2>"$WORK/err.txt"
rc=$?
if [ "$level" -ge 3 ]; then
	[ $rc = 2 ] || fail "paranoid $level: exit $rc, want 2"
	want="callpath record: cannot open event 'page-faults': permission denied (Permission denied). The kernel's /proc/sys/kernel/perf_event_paranoid is $level; measuring your own programs needs 2 or lower (1 to include kernel time): run 'sudo sysctl kernel.perf_event_paranoid=2' (or run as root / with CAP_PERFMON)"
	[ "$(head -1 "$WORK/err.txt")" = "$want" ] || fail "got: $(head -1 "$WORK/err.txt")"
	[ ! -e "$WORK/out/m" ] || fail "a measurement was started"
	note "paranoid $level: refused with the advice"
	exit 0
fi
[ $rc = 0 ] || fail "paranoid $level: exit $rc: $(cat "$WORK/err.txt")"
python3 "$CP_SOURCE_DIR/tests/e2e/record-check.py" "$WORK/out/m" >"$WORK/c.json" || fail "invalid files"
json_assert "$WORK/c.json" '0.97 * 4096 <= d["threads"][0]["totals"][0] <= 1.1 * 4096' "page faults counted as nobody"
json_assert "$WORK/c.json" 'd["threads"][0]["samples"][1] > 0' "cpu-clock sampled as nobody"
if [ "$level" = 2 ]; then
	json_assert "$WORK/c.json" 'any("counting user mode only" in n for n in d["procs"][0]["notes"])' \
		"paranoid 2: no NOTE about user-mode-only counting"
	note "paranoid 2: user mode only, noted"
else
	note "paranoid $level: counted as nobody"
fi
