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

thr=$(ls "$WORK/m"/*.thr | head -1)
proc=$(ls "$WORK/m"/*.proc | head -1)
used=$(python3 -c "import struct,sys; print(struct.unpack_from('<Q', open(sys.argv[1],'rb').read(), 24)[0])" "$thr")

cp -r "$WORK/m" "$WORK/trunc"
truncate -s $((used / 2)) "$WORK/trunc/$(basename "$thr")"
expect_error "$WORK/trunc" "$(basename "$thr"): truncated at offset $((used / 2)), header says $used bytes"

cp -r "$WORK/m" "$WORK/magic"
printf 'XXXX' | dd of="$WORK/magic/$(basename "$proc")" conv=notrunc status=none
expect_error "$WORK/magic" "bad magic at offset 0"

cp -r "$WORK/m" "$WORK/version"
printf '\x63' | dd of="$WORK/version/$(basename "$thr")" bs=1 seek=8 conv=notrunc status=none
expect_error "$WORK/version" "version 99"

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
