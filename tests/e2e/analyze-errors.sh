#!/bin/bash
# callpath analyze on bad input: a missing directory, an empty one, a regular file, a
# corrupt or truncated thread file, a garbage process file give a clear message and exit
# status 2, never a crash; a program killed with SIGKILL is analyzed up to its last sample
# with a warning.
. "$(dirname "$0")/lib.sh"

require_built "$CALLPATH"
WL=$CP_WORKLOADS/loopinline.O2
require_built "$WL"

# expect_error PATTERN ARGS...: analyze fails with status 2 and a message matching PATTERN
expect_error() {
	local pat=$1
	shift
	"$CALLPATH" analyze "$@" >"$WORK/err.out" 2>"$WORK/err.err"
	local rc=$?
	[ $rc -eq 2 ] || fail "analyze $* exited $rc (expected 2): $(cat "$WORK/err.err")"
	grep -Eq "$pat" "$WORK/err.err" || fail "analyze $*: message '$(cat "$WORK/err.err")' does not match '$pat'"
}

expect_error "no measurement directory" "$WORK/missing"
mkdir "$WORK/empty"
expect_error "no measurement files" "$WORK/empty"
echo hello >"$WORK/plain"
expect_error "not a directory" "$WORK/plain"
expect_error "unknown option" --bogus "$WORK/empty"
expect_error "NAME=FORMULA|needs a value" "$WORK/empty" --metric

# (CALLPATH_PACK=0: the thread's data stays in its own file, which the cases below damage)
run env CALLPATH_PACK=0 "$CALLPATH" record -o "$WORK/m" -- "$WL" 300
thr=$(ls "$WORK/m"/*.thr | head -1)
proc=$(ls "$WORK/m"/*.proc | head -1)

cp -r "$WORK/m" "$WORK/trunc"
t=$WORK/trunc/$(basename "$thr")
# below the published size (the header's `used`, at offset 24; the arena file is larger)
used=$(python3 -c "import struct,sys; print(struct.unpack_from('<Q', open(sys.argv[1],'rb').read(32), 24)[0])" "$t")
truncate -s $((used - 20)) "$t"
expect_error "file .*$(basename "$thr"): truncated at offset [0-9]+" "$WORK/trunc"

cp -r "$WORK/m" "$WORK/magic"
printf 'XXXXXXXX' | dd of="$WORK/magic/$(basename "$thr")" conv=notrunc status=none
expect_error "file .*$(basename "$thr"): bad magic" "$WORK/magic"

cp -r "$WORK/m" "$WORK/garbage"
head -c 4096 /dev/urandom >"$WORK/garbage/$(basename "$proc")"
expect_error "file .*$(basename "$proc")" "$WORK/garbage"

cp -r "$WORK/m" "$WORK/nodes"
# corrupt the nodes after the thread header (parents pointing forward, bad kinds)
dd if=/dev/urandom of="$WORK/nodes/$(basename "$thr")" bs=1 seek=360 count=200 conv=notrunc status=none
expect_error "file .*$(basename "$thr")" "$WORK/nodes"

cp -r "$WORK/m" "$WORK/zero"
: >"$WORK/zero/$(basename "$thr")"
expect_error "truncated at offset 0" "$WORK/zero"

# a program killed with SIGKILL: analyzed up to its last published sample
"$CALLPATH" record -o "$WORK/killed" -- "$WL" 1000000 >/dev/null 2>&1 &
rec=$!
for _ in $(seq 100); do
	ls "$WORK/killed"/*.thr >/dev/null 2>&1 && break
	sleep 0.05
done
sleep 0.4
child=$(pgrep -P $rec | head -1)
[ -n "$child" ] || { kill $rec; wait $rec; fail "could not find the recorded program's pid"; }
kill -KILL "$child"
wait $rec
if ! "$CALLPATH" analyze "$WORK/killed" >"$WORK/k.out" 2>"$WORK/k.err"; then
	fail "analyze of a killed run failed: $(cat "$WORK/k.err")"
fi
grep -q "did not finish normally" "$WORK/k.err" || fail "no warning about the killed process: $(cat "$WORK/k.err")"
grep -q "1 profiles" "$WORK/k.out" || fail "unexpected summary: $(cat "$WORK/k.out")"
note "ok"
