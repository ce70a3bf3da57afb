#!/bin/bash
# Option errors are caught before the program runs, with messages that say what to do.
source "$(dirname "$0")/lib.sh"
cd "$WORK"
"$CALLPATH" record --help >out 2>&1 || fail "--help failed"
grep -q "cputime" out && grep -q "realtime" out || fail "--help does not list events"
"$CALLPATH" record -e nosuch -- true >out 2>&1 && fail "unknown event accepted"
grep -q "unknown event 'nosuch'" out && grep -q "cputime" out || fail "bad message: $(cat out)"
"$CALLPATH" record -e cputime@fast -- true >out 2>&1 && fail "bad period accepted"
grep -q "bad period" out || fail "bad period message: $(cat out)"
[ -z "$(ls -d callpath-* 2>/dev/null)" ] || fail "directory created despite bad options"
"$CALLPATH" record -- ./no-such-program >out 2>&1
rc=$?
[ $rc = 127 ] || fail "missing program: exit $rc, want 127"
grep -q "no-such-program" out || fail "missing program not named: $(cat out)"
"$CALLPATH" record -q -o m -- sh -c 'exit 3'
[ $? = 3 ] || fail "exit status of the program not returned"
python3 "$CP_SOURCE_DIR/tests/e2e/record-check.py" m >m.json || fail "invalid files"
json_assert m.json 'd["procs"][0]["exit_status"] == 3' "exit(3) recorded"

# A directory that already holds a measurement: its files are replaced, not mixed in.
touch m/keep.txt
"$CALLPATH" record -o m -- true >out 2>&1 || fail "second run into m failed: $(cat out)"
grep -q "replacing the earlier measurement" out || fail "no replace message: $(cat out)"
[ -f m/keep.txt ] || fail "a file that is not a measurement was removed"
python3 "$CP_SOURCE_DIR/tests/e2e/record-check.py" m >m2.json || fail "invalid files"
json_assert m2.json 'len(d["procs"]) == 1 and d["procs"][0]["exe"].endswith("/true")' "old run's files replaced"

# Exit status recorded in the process file, whether main returns it or exit() is called.
printf 'int main(void) { return 5; }\n' >ret.c
cc -o ret ret.c || fail "cannot compile helper"
"$CALLPATH" record -q -o r -- ./ret
[ $? = 5 ] || fail "status of main's return not passed through"
python3 "$CP_SOURCE_DIR/tests/e2e/record-check.py" r >r.json || fail "invalid files"
json_assert r.json 'd["procs"][0]["exit_status"] == 5 and d["procs"][0]["flags"] & 1' "exit status 5 recorded"
exit 0
