#!/bin/bash
# attach --inject refuses clearly (status 2, a message naming the cause) and leaves the
# program as it was: a process that does not exist; a process another tracer holds (a
# PTRACE_SEIZE from python); another user's process (as nobody against ours when root);
# a trigger event (its calls would need the preloaded wrappers). A process that exits while
# measured: its measurement up to the end is kept and the end is said.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/attach-helpers/attach.sh"
require_own_sampling
require_tool python3

refused() {
	local pattern=$1 status
	shift
	"$CALLPATH" attach --inject "$@" >"$WORK/out" 2>"$WORK/err"
	status=$?
	[ "$status" -eq 2 ] || { cat "$WORK/err" >&2; fail "attach --inject $* exited $status, not 2"; }
	grep -q "$pattern" "$WORK/err" || { cat "$WORK/err" >&2; fail "attach --inject $*: no '$pattern'"; }
}

gone=$(($(cat /proc/sys/kernel/pid_max) + 1))
refused "no process $gone" --for 1 -o "$WORK/x" "$gone"

start_steady 20 1 3
trap 'kill -KILL "$STEADY_PID" "$tracer" 2>/dev/null' EXIT
refused "needs the runtime preloaded" -e alloc --for 1 -o "$WORK/x" "$STEADY_PID"

# Another tracer: seized (not stopped) by a python process that holds it.
python3 - "$STEADY_PID" "$WORK/traced" <<'PY' &
import ctypes, sys, time
libc = ctypes.CDLL(None, use_errno=True)
if libc.ptrace(0x4206, int(sys.argv[1]), None, None) != 0:  # PTRACE_SEIZE
    sys.exit("seize failed: %d" % ctypes.get_errno())
open(sys.argv[2], "w").close()
time.sleep(30)
PY
tracer=$!
for _ in $(seq 100); do [ -e "$WORK/traced" ] && break; sleep 0.1; done
[ -e "$WORK/traced" ] || fail "the python tracer did not seize the program"
refused "already traced by process $tracer" --for 1 -o "$WORK/x" "$STEADY_PID"
kill -KILL "$tracer"
wait "$tracer" 2>/dev/null

if [ "$(id -u)" -eq 0 ]; then
	require_tool setpriv
	chmod 755 "$WORK"
	setpriv --reuid=65534 --regid=65534 --clear-groups "$CALLPATH" attach --inject --for 1 \
		-o "$WORK/nobody" "$STEADY_PID" >"$WORK/out" 2>"$WORK/err"
	status=$?
	[ "$status" -eq 2 ] && grep -q "another user" "$WORK/err" ||
		{ cat "$WORK/err" >&2; fail "injecting into another user's process: status $status"; }
fi
grep -q libcallpath-rt "/proc/$STEADY_PID/maps" && fail "a refused injection loaded the runtime"
kill -TERM "$STEADY_PID"
wait "$STEADY_PID"
[ "$?" -eq 3 ] || fail "the program's exit status changed after the refusals"

# Exits while measured: its runtime writes the measurement at exit.
start_steady 5 2 4 # long enough to be attached to at load 20 (2 s was not: "cannot read its modules")
run "$CALLPATH" attach --inject --for 10 -o "$WORK/e" "$STEADY_PID"
grep -q "(the process ended)" "$WORK/run.err" || { cat "$WORK/run.err" >&2; fail "the end was not said"; }
read -r got ngot <<<"$(share_three "$WORK/e")"
[ "$ngot" -gt 50 ] || fail "the measurement of a process that ended kept only $ngot samples"
wait "$STEADY_PID"
[ "$?" -eq 4 ] || fail "the program's exit status changed while measured"
trap - EXIT
note "ok"
