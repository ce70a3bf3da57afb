#!/bin/bash
# callpath top, driven through tmux (keys sent, the screen captured): on a finished
# measurement, arrows expand and collapse, v/s/t switch view, sort and thread; on a running
# one (found by the PID of callpath record), it re-reads the files while the program runs;
# quitting with q, Ctrl-C or SIGTERM restores the terminal (no alternate screen, echo and
# canonical input back).
. "$(dirname "$0")/lib.sh"

require_built "$CALLPATH" "$CP_WORKLOADS/threads.O2" "$CP_WORKLOADS/untilsig.O2"
require_tool tmux
TMUX_SOCK=$WORK/tmux.sock
tm() { tmux -S "$TMUX_SOCK" "$@"; }
recpid=
cleanup() {
	tm kill-server 2>/dev/null
	[ -n "$recpid" ] && kill -KILL $(pgrep -P "$recpid") 2>/dev/null
	rm -rf "$WORK"
}
trap cleanup EXIT

screen() { tm capture-pane -p -t t; }
# The tree part of the rows (after the four value columns, 39 characters): two spaces of
# indentation per level, then [-] open, [+] closed or four spaces (a leaf), then the name.
tree() { screen | sed -n '5,$p' | grep -E '^ *[0-9.]+%' | cut -c40-; }
# Does the tree show a row below the root's children? (A node of level 2: four spaces and
# its marker; a leaf of level 2: eight spaces. A leaf of level 1, such as a sample's
# `[ld-linux-x86-64.so.2]` root under ASan, has six: not deeper.)
second_level() { tree | grep -Eq '^    \[[-+]\] |^        [^ ]'; }
# wait_screen REGEX [SECONDS]: until the screen matches (fails with the screen otherwise)
wait_screen() {
	local tries=$((${2:-10} * 10))
	for _ in $(seq "$tries"); do
		screen | grep -Eq -- "$1" && return 0
		sleep 0.1
	done
	screen >&2
	fail "the screen never showed /$1/"
}
no_screen() { # no_screen REGEX: the current screen does not match
	if screen | grep -Eq -- "$1"; then
		screen >&2
		fail "the screen shows /$1/"
	fi
}
keys() {
	tm send-keys -t t "$@"
	sleep 0.3
}
# The terminal is back to the shell: no alternate screen, line mode and echo on.
assert_restored() {
	for _ in $(seq 50); do
		[ "$(tm display -p -t t '#{alternate_on}')" = 0 ] && break
		sleep 0.1
	done
	[ "$(tm display -p -t t '#{alternate_on}')" = 0 ] || fail "$1: still on the alternate screen"
	tm send-keys -t t "clear; stty -a | tr ' ;' '\n\n' | grep -xE -- '-?(icanon|echo)' | tr '\n' ' '; echo RESTORED" Enter
	wait_screen "^(-?icanon|-?echo) .*RESTORED$"
	screen | grep -E "RESTORED$" | grep -q -- "-icanon\|-echo " && fail "$1: terminal left raw: $(screen)"
	note "$1: terminal restored ($(screen | grep -E 'RESTORED$'))"
}

run "$CALLPATH" record -q -e cputime -e realtime -o "$WORK/fin" "$CP_WORKLOADS/threads.O2" 2
tm new-session -d -x 160 -y 45 -s t "env -i PATH=$PATH TERM=screen HOME=$WORK HISTFILE=/dev/null bash --norc --noprofile"
tm send-keys -t t "$CALLPATH top $WORK/fin" Enter
wait_screen "callpath top .*\[finished\]"
wait_screen "\[-\] .*crunch"        # the hot path is open at the start
screen | grep -q "view top-down | metric cputime | sort inclusive | thread all (3 threads)" ||
	fail "header: $(screen | head -3)"

keys c                                # collapse all: the root's children only
wait_screen "\[\+\] _start|\[\+\] __clone"
no_screen "crunch"
[ "$(tree | grep -c '^  \[+\] ')" -ge 1 ] && ! second_level ||
	fail "collapsed: $(tree)"
keys Home Down Right                  # open the first child of the root
second_level || fail "expanded: no second level: $(tree)"
keys Left Left                        # close it again, then go to the root
second_level && fail "collapsed again: $(tree)"

keys v                                # bottom-up: procedures at the first level
wait_screen "view bottom-up"
tree | grep -q '^  \[[-+]\] crunch  (threads.O2)' || fail "bottom-up: no crunch at level 1: $(tree)"
keys v
wait_screen "view flat"
wait_screen "threads\.O2"
keys s
wait_screen "sort exclusive"
keys m
wait_screen "metric realtime \| sort exclusive"
keys m v t t                           # cputime, top-down, thread 1 (the worker with weight 3)
wait_screen "view top-down .* thread [0-9]+:1 "
total=$(screen | grep -E '<total>' | awk '{print $1}' | tr -d %)
[ "$total" = "100.00" ] || fail "thread 1's view: total row $total"
keys q
assert_restored "q"

# A running program, found by the PID of callpath record; re-read while it runs.
"$CALLPATH" record -q -o "$WORK/live" "$CP_WORKLOADS/untilsig.O2" "$WORK/started" \
	>"$WORK/rec.out" 2>&1 &
recpid=$!
for _ in $(seq 100); do [ -e "$WORK/started" ] && break; sleep 0.1; done
[ -e "$WORK/started" ] || fail "the program did not start"
tm send-keys -t t "$CALLPATH top $recpid --interval 0.3" Enter
wait_screen "callpath top $WORK/live  \[running\]"
wait_screen "burn"
first=$(screen | sed -n 's/.*refresh \([0-9]*\).*/\1/p')
wait_screen "refresh $((first + 3))" # re-read at least three more times
[ -e /proc/$(pgrep -P $recpid)/status ] && grep -q '^State:.*[RS]' /proc/$(pgrep -P $recpid)/status ||
	fail "the program is not running"
keys C-c
assert_restored "Ctrl-C"

# SIGTERM from outside restores the terminal too.
tm send-keys -t t "$CALLPATH top $WORK/live" Enter
wait_screen "callpath top $WORK/live"
shell=$(tm display -p -t t '#{pane_pid}')
toppid=$(pgrep -P "$shell")
[ -n "$toppid" ] || fail "no top process"
kill -TERM "$toppid"
assert_restored "SIGTERM"

kill -TERM $(pgrep -P $recpid)
wait $recpid
recpid=
note "ok"
