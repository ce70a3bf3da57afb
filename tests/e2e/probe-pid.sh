#!/bin/bash
# The control channel (docs/internals/control.md): `callpath probe --pid` inserts and
# removes probes in a running program while 8 threads call the probed function without
# pause; 1,000 insert/remove cycles (hot has a push-rbp prologue: without the breakpoint-first
# protocol of docs/internals/patch.md the program crashes within ~60), each acknowledged with exactly one function changed;
# afterwards the calls counted are exact: counted() (inserted before its calls) has every
# call the program made, uncounted() (inserted and removed) none, hot() (left in while its
# callers ran) no more than the program made.
. "$(dirname "$0")/lib.sh"
TREE="$CP_SOURCE_DIR/tests/e2e/probe-tree.py"
wl=$CP_WORKLOADS/control.O2
require_built "$wl" "$CALLPATH"

calls_of() { # DIR FUNCTION: the calls of FUNCTION summed over its contexts and threads
	python3 "$TREE" "$1" | awk -F'\t' -v f="$2" \
		'{ n = split($2, a, " > "); if (a[n] == f) s += $3 } END { print s + 0 }'
}

start() { # COMMAND...: runs COMMAND in the background; waits for the program's pid
	rm -f "$WORK/pid" "$WORK/go"
	"$@" >"$WORK/prog.out" 2>"$WORK/prog.err" &
	bg=$!
	wait_for_pid "$WORK/pid"
	[ -s "$WORK/pid" ] || fail "the program did not start: $(cat "$WORK/prog.err")"
	pid=$(cat "$WORK/pid")
}

finish() {
	touch "$WORK/go"
	wait "$bg" || fail "the run failed: $(cat "$WORK/prog.out" "$WORK/prog.err")"
	read -r _ made_hot _ made_counted _ made_uncounted <"$WORK/prog.out"
}

start "$CALLPATH" probe -q -o "$WORK/m" -f no_such_function_at_start -- \
	"$wl" "$WORK/pid" "$WORK/go" 8 1000
args=()
for _ in $(seq 1000); do args+=(--add hot --remove hot); done
"$CALLPATH" probe --pid "$pid" "${args[@]}" >"$WORK/cycles.out" 2>"$WORK/cycles.err" ||
	{ touch "$WORK/go"; fail "cycles: $(cat "$WORK/cycles.err")"; }
added=$(grep -cx 'add hot: 1 probed, 0 refused' "$WORK/cycles.out")
removed=$(grep -cx 'remove hot: 1 restored' "$WORK/cycles.out")
[ "$added" = 1000 ] && [ "$removed" = 1000 ] ||
	{ touch "$WORK/go"; fail "acknowledgements: $added adds, $removed removes of 1000"; }
run "$CALLPATH" probe --pid "$pid" --add hot --add counted --add uncounted --remove uncounted
grep -qx 'remove uncounted: 1 restored' "$WORK/run.out" || fail "remove: $(cat "$WORK/run.out")"
# -o with a relative directory: the CLI sends an absolute reply path and gets its answer.
(cd "$WORK" && timeout 20 "$CALLPATH" probe --pid "$pid" -o m --remove uncounted) \
	>"$WORK/rel.out" 2>&1
grep -qx 'remove uncounted: 0 restored' "$WORK/rel.out" ||
	{ touch "$WORK/go"; fail "relative -o: $(cat "$WORK/rel.out")"; }
# A request with a relative reply path gets an error (in the FIFO of that name in the
# measurement directory) instead of no answer.
mkfifo "$WORK/m/.reply-rel"
exec 3<>"$WORK/m/.reply-rel"
printf '.reply-rel\tping\t\n' >"$WORK/m/$pid.control"
line=
read -t 10 -r line <&3
exec 3<&-
rm -f "$WORK/m/.reply-rel"
case $line in error*absolute*) ;; *) touch "$WORK/go"; fail "relative reply path: '$line'" ;; esac
finish
[ "$made_counted" = 8000 ] || fail "program output: $(cat "$WORK/prog.out")"
got=$(calls_of "$WORK/m" counted)
[ "$got" = 8000 ] || fail "counted: $got calls recorded, the program made 8000"
got=$(calls_of "$WORK/m" uncounted)
[ "$got" = 0 ] || fail "uncounted (removed before its calls): $got calls recorded"
got=$(calls_of "$WORK/m" hot)
[ "$got" -gt 0 ] && [ "$got" -le "$made_hot" ] ||
	fail "hot: $got calls recorded, the program made $made_hot"
[ ! -e "$WORK/m/$pid.control" ] || fail "the control FIFO outlived the program"
ls "$WORK/m"/.reply-* >/dev/null 2>&1 && fail "a reply FIFO was left behind"
note "1000 insert/remove cycles under 8 threads; counted 8000 = 8000; hot $got <= $made_hot"

# Under `callpath record --control`, with sampling: the same exact count.
start "$CALLPATH" record -q --control -o "$WORK/r" -- "$wl" "$WORK/pid" "$WORK/go" 2 500
run "$CALLPATH" probe --pid "$pid" --add counted
grep -qx 'add counted: 1 probed, 0 refused' "$WORK/run.out" || fail "record: $(cat "$WORK/run.out")"
finish
got=$(calls_of "$WORK/r" counted)
[ "$got" = 1000 ] || fail "under record --control: $got calls of counted, the program made 1000"

# Refusals and errors are said: a function that cannot be patched, a process without the
# channel, one that is not measured, one that does not exist.
start "$CALLPATH" record -q -o "$WORK/n" -- "$wl" "$WORK/pid" "$WORK/go" 1 1
"$CALLPATH" probe --pid "$pid" --add counted >/dev/null 2>"$WORK/err" && fail "no channel: accepted"
grep -q "has no control channel" "$WORK/err" || fail "no channel: $(cat "$WORK/err")"
finish
start "$CALLPATH" probe -q -o "$WORK/t" -f no_such_function -- "$wl" "$WORK/pid" "$WORK/go" 1 1
"$CALLPATH" probe --pid "$pid" --add tiny >"$WORK/out" 2>"$WORK/err" || fail "tiny: $(cat "$WORK/err")"
grep -q "^add tiny: 0 probed, 1 refused: tiny in .*control.O2: too short" "$WORK/out" ||
	fail "refusal: $(cat "$WORK/out")"
finish
sleep 30 &
sleeper=$!
"$CALLPATH" probe --pid "$sleeper" --add x >/dev/null 2>"$WORK/err" && fail "not measured: accepted"
kill "$sleeper"
wait "$sleeper" 2>/dev/null
grep -q "not measured by callpath" "$WORK/err" || fail "not measured: $(cat "$WORK/err")"
"$CALLPATH" probe --pid "$sleeper" --add x >/dev/null 2>"$WORK/err" && fail "no process: accepted"
grep -q "no process" "$WORK/err" || fail "no process: $(cat "$WORK/err")"
# A program killed outright (SIGKILL: its runtime's exit code never runs) leaves its control
# FIFO behind; record removes it once the program is gone.
"$CALLPATH" record -q --control -o "$WORK/k" -- sleep 30 >/dev/null 2>"$WORK/k.err" &
rec=$!
for _ in $(seq 200); do
	fifo=$(ls "$WORK/k"/*.control 2>/dev/null)
	[ -n "$fifo" ] && break
	sleep 0.05
done
[ -n "$fifo" ] || fail "record --control made no control FIFO"
kill -KILL "$(basename "$fifo" .control)"
wait "$rec"
[ ! -e "$fifo" ] || fail "the control FIFO of a killed program was left behind"
note "ok"
