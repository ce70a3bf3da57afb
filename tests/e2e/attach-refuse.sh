#!/bin/bash
# callpath attach refuses clearly, with exit status 2 and a message naming the cause: a
# process that does not exist, a kernel thread, another user's process (run as nobody
# against ours when we are root, else against pid 1), events that need the runtime inside
# the program, and a malformed command line.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/attach-helpers/attach.sh"

# refused PATTERN ARGS...: callpath attach ARGS fails with status 2 saying PATTERN.
refused() {
	local pattern=$1 status
	shift
	"$CALLPATH" attach "$@" >"$WORK/out" 2>"$WORK/err"
	status=$?
	[ "$status" -eq 2 ] || { cat "$WORK/err" >&2; fail "attach $* exited $status, not 2"; }
	grep -q "$pattern" "$WORK/err" || { cat "$WORK/err" >&2; fail "attach $*: no '$pattern'"; }
}

gone=$(( $(cat /proc/sys/kernel/pid_max) + 1 ))
refused "no process $gone" --for 1 -o "$WORK/x" "$gone"
refused "kernel thread" --for 1 -o "$WORK/x" 2
refused "usage: callpath attach" --for 1
refused "positive number" --for -3 1
refused "unknown event" -e no-such-event 1

start_steady 20 1
refused "needs the runtime" -e realtime --for 1 -o "$WORK/x" "$STEADY_PID"
if [ "$(id -u)" -eq 0 ]; then
	require_tool setpriv
	chmod 755 "$WORK"
	setpriv --reuid=65534 --regid=65534 --clear-groups "$CALLPATH" attach --for 1 \
		-o "$WORK/nobody" "$STEADY_PID" >"$WORK/out" 2>"$WORK/err"
	status=$?
else
	"$CALLPATH" attach --for 1 -o "$WORK/other" 1 >"$WORK/out" 2>"$WORK/err"
	status=$?
fi
[ "$status" -eq 2 ] && grep -q "another user" "$WORK/err" ||
	{ cat "$WORK/err" >&2; fail "attaching to another user's process: status $status"; }
kill -TERM "$STEADY_PID"
wait "$STEADY_PID" || fail "the program failed after the refusals"
note "ok"
