#!/bin/bash
# Truncated or corrupt measurement files: a non-zero exit with a message naming the file,
# never a crash (exit status < 128), whatever bytes are damaged.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/report-helpers/record.sh"

# (CALLPATH_PACK=0: the thread keeps its own file, which the cases below damage)
CALLPATH_PACK=0 report_record "$WORK/m" "$CP_WORKLOADS/chain.O2" 300
run "$CALLPATH" report "$WORK/m"

expect_error() { # DIR PATTERN
	# The copies' cached database would be trusted when the damage lands in the same
	# timestamp tick as the copy (small files copy fast): read the damaged files.
	[ -d "$1" ] && rm -f "$1/callpath.db"
	"$CALLPATH" report "$1" >/dev/null 2>"$WORK/err"
	local rc=$?
	[ $rc -ne 0 ] || fail "report of $1 succeeded"
	[ $rc -lt 128 ] || fail "report of $1 crashed (exit $rc): $(cat "$WORK/err")"
	grep -q -- "$2" "$WORK/err" || fail "message for $1 lacks '$2': $(cat "$WORK/err")"
}

# Each damaged copy keeps the saved callpath.db and every timestamp of the original (cp -a,
# then the damaged file's mtime put back), so a report that trusted the database by its
# mtime would never read the damaged file: it must notice by what the database was made from.
damaged_copy() { # NAME: a copy of the measurement as $WORK/NAME
	cp -a "$WORK/m" "$WORK/$1"
}
same_mtime() { # FILE in a copy: give it back the original's mtime
	touch -r "$WORK/m/$(basename "$1")" "$1"
}

thr=$(ls "$WORK/m"/*.thr | head -1)
proc=$(ls "$WORK/m"/*.proc | head -1)
used=$(python3 -c "import struct,sys; print(struct.unpack_from('<Q', open(sys.argv[1],'rb').read(), 24)[0])" "$thr")

damaged_copy trunc
truncate -s $((used / 2)) "$WORK/trunc/$(basename "$thr")"
same_mtime "$WORK/trunc/$(basename "$thr")"
expect_error "$WORK/trunc" "$(basename "$thr"): truncated at offset $((used / 2)), header says $used bytes"

damaged_copy magic
printf 'XXXX' | dd of="$WORK/magic/$(basename "$proc")" conv=notrunc status=none
same_mtime "$WORK/magic/$(basename "$proc")"
expect_error "$WORK/magic" "bad magic at offset 0"

damaged_copy version
printf '\x63' | dd of="$WORK/version/$(basename "$thr")" bs=1 seek=8 conv=notrunc status=none
same_mtime "$WORK/version/$(basename "$thr")"
expect_error "$WORK/version" "version 99"

# A plain copy (new mtimes, the database copied last or first) of an intact measurement is
# analyzed again once and then read from its own saved database.
# (Analyzing again replaces callpath.db by a rename: a new inode.)
cp -r "$WORK/m" "$WORK/copy"
touch -d '+1 hour' "$WORK/copy/callpath.db"
ino=$(stat -c %i "$WORK/copy/callpath.db")
run "$CALLPATH" report "$WORK/copy"
[ "$(stat -c %i "$WORK/copy/callpath.db")" != "$ino" ] ||
	fail "the copy's database was trusted although every file of the copy is new"
ino=$(stat -c %i "$WORK/copy/callpath.db")
run "$CALLPATH" report "$WORK/copy"
[ "$(stat -c %i "$WORK/copy/callpath.db")" = "$ino" ] ||
	fail "an unchanged measurement was analyzed again"

# A damaged or foreign database file given as PATH.
[ -f "$WORK/m/callpath.db" ] || fail "report did not save $WORK/m/callpath.db"
head -c 3000 "$WORK/m/callpath.db" >"$WORK/trunc.db"
expect_error "$WORK/trunc.db" "DB: "
expect_error /etc/hostname "not a callpath database"
mkdir "$WORK/empty"
expect_error "$WORK/empty" "no measurement files"
expect_error "$WORK/does-not-exist" "cannot open"

# Random damage anywhere in the used part of the thread or process file: error or a report,
# never a crash.
for i in $(seq 1 8); do
	rm -rf "$WORK/rand"
	cp -r "$WORK/m" "$WORK/rand"
	for f in "$WORK/rand"/*.thr "$WORK/rand"/*.proc; do
		python3 - "$f" "$i" <<'PY'
import random, struct, sys
path, seed = sys.argv[1], int(sys.argv[2])
data = bytearray(open(path, "rb").read())
used = struct.unpack_from("<Q", data, 24)[0]
rnd = random.Random(seed * 7919 + len(path))
for _ in range(rnd.randint(1, 8)):
    off = rnd.randrange(0, max(1, min(used, len(data))))
    data[off] = rnd.randrange(256)
open(path, "wb").write(data)
PY
	done
	"$CALLPATH" report "$WORK/rand" --format json >/dev/null 2>"$WORK/err"
	rc=$?
	[ $rc -lt 128 ] || fail "crash (exit $rc) on randomly damaged files (seed $i): $(cat "$WORK/err")"
done
note "ok"
