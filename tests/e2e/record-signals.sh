#!/bin/bash
# Signals sent to callpath with kill() are meant for the program it runs: SIGINT, SIGTERM,
# SIGHUP, SIGQUIT, SIGUSR1 and SIGUSR2 are passed on (as `time` and `perf` do). The
# program ends by the signal, the profile measured up to then is still analyzed and
# summarized, and callpath exits 128+N like the program. A program that catches the
# signal carries on and exits as it likes. Probe and gprof run the program the same way.
. "$(dirname "$0")/lib.sh"
wl=$CP_WORKLOADS/untilsig.O2
ulimit -c 0
# Job control: background jobs keep SIGINT and SIGQUIT (a shell without it ignores them
# in `cmd &`, for callpath and for the program alike).
set -m

# start NAME CALLPATH-ARGS...: runs callpath in the background until the program is up.
start() {
	local name=$1
	shift
	"$CALLPATH" "$@" >"$WORK/$name.out" 2>"$WORK/$name.err" &
	pid=$!
	for _ in $(seq 600); do
		[ -e "$WORK/$name.ready" ] && return 0
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	cat "$WORK/$name.out" "$WORK/$name.err" >&2
	fail "$name: the program did not start"
}

for sig in INT TERM HUP QUIT USR1 USR2; do
	num=$(kill -l "$sig")
	start "$sig" record -o "$WORK/m-$sig" -- "$wl" "$WORK/$sig.ready"
	kill -"$sig" "$pid"
	wait "$pid"
	rc=$?
	[ "$rc" = $((128 + num)) ] || {
		cat "$WORK/$sig.out" "$WORK/$sig.err" >&2
		fail "SIG$sig: callpath exited $rc, not $((128 + num))"
	}
	grep -q "killed by signal $num" "$WORK/$sig.err" || fail "SIG$sig: no word of the signal"
	grep -q "no signal came" "$WORK/$sig.out" && fail "SIG$sig: the program never got it"
	# the profile up to the signal: analyzed, and burn() is where the time went
	grep -q "hottest procedures" "$WORK/$sig.err" || fail "SIG$sig: no summary"
	grep -qE '^ *[0-9.]+%  *[0-9.]+%  burn ' "$WORK/$sig.err" || {
		cat "$WORK/$sig.err" >&2
		fail "SIG$sig: burn() not in the summary"
	}
	[ -f "$WORK/m-$sig/callpath.db" ] || fail "SIG$sig: no database"
done

# A program that catches the signal decides: it exits 0 here.
start catch record -o "$WORK/m-catch" -- "$wl" "$WORK/catch.ready" catch
kill -USR1 "$pid"
wait "$pid" || fail "caught SIGUSR1: callpath exited $?"
grep -qx "caught $(kill -l USR1)" "$WORK/catch.out" || fail "the program did not catch SIGUSR1"

# The terminal's ^C goes to callpath and the program alike (one process group): callpath
# survives it and reports, and the program gets it once (a second copy from callpath would
# usually merge with the pending first one, so this part guards more than it proves).
python3 - "$CALLPATH" "$wl" "$WORK" <<'PY' || fail "^C on a terminal"
import os, pty, sys, time
callpath, wl, work = sys.argv[1:]
ready = os.path.join(work, "tty.ready")
pid, fd = pty.fork()
if pid == 0:
    os.execv(callpath, [callpath, "record", "-o", os.path.join(work, "m-tty"), "--", wl, ready, "count"])
out = b""
for _ in range(600):
    if os.path.exists(ready):
        break
    time.sleep(0.1)
else:
    sys.exit("the program did not start")
os.write(fd, b"\x03")
while True:
    try:
        chunk = os.read(fd, 4096)
    except OSError:
        break
    if not chunk:
        break
    out += chunk
_, status = os.waitpid(pid, 0)
text = out.decode(errors="replace")
if os.waitstatus_to_exitcode(status) != 0:
    sys.exit("callpath exited %d after ^C:\n%s" % (os.waitstatus_to_exitcode(status), text))
if "caught 2 1 times" not in text:
    sys.exit("the program did not get ^C exactly once:\n" + text)
if "callpath record: measurement in" not in text:
    sys.exit("no summary after ^C:\n" + text)
PY

# probe runs the program the same way.
start probe probe -f burn -o "$WORK/m-probe" -- "$wl" "$WORK/probe.ready"
kill -TERM "$pid"
wait "$pid"
rc=$?
[ "$rc" = $((128 + $(kill -l TERM))) ] || fail "probe: exited $rc after SIGTERM"
note "ok"
