#!/bin/bash
# -e io attributes bytes read and written, time in the call and calls to the full calling
# context, exactly for the bytes: the io workload moves known amounts with write, pwrite,
# writev, fwrite, read, pread and fread from one function each.
source "$(dirname "$0")/lib.sh"
require_tool cc
for v in O2 O0; do
	mkdir -p "$WORK/data$v"
	run "$CALLPATH" record -q -e io -e realtime@500us -o "$WORK/m$v" -- "$CP_WORKLOADS/io.$v" "$WORK/data$v"
	"$CALLPATH" report "$WORK/m$v" --format json --threshold 0 >"$WORK/r$v.json" \
		2>"$WORK/err" || fail "$v: report failed: $(cat "$WORK/err")"
	python3 - "$WORK/r$v.json" "$v" <<'PY' || fail "$v: wrong I/O metrics"
import json, sys
d = json.load(open(sys.argv[1]))
names = [m["name"] for m in d["metrics"]]
for want in ["io-read-bytes", "io-write-bytes", "io-time", "io-calls", "realtime"]:
    assert want in names, (want, names)
rb, wb, tm, nc = (names.index(x) for x in ["io-read-bytes", "io-write-bytes", "io-time", "io-calls"])
assert d["metrics"][tm]["unit"] == "ns", d["metrics"][tm]

def incl(fn, m):
    return sum(n["inclusive"][m] for n in d["nodes"] if n["name"] == fn and n["kind"] == "procedure")

KiB = 1024
want = {  # function: (read bytes, written bytes, calls)
    "writer_a": (0, 3072 * KiB, 48),
    "writer_b": (0, 1024 * KiB, 64),
    "writer_v": (0, 512 * KiB, 64),
    "fwriter": (0, 256 * KiB, 256),
    "reader_c": (2048 * KiB, 0, 64),
    "preader": (1024 * KiB, 0, 128),
    "freader": (128 * KiB, 0, 32),
}
bad = []
for fn, w in want.items():
    got = (incl(fn, rb), incl(fn, wb), incl(fn, nc))
    if got != w:
        bad.append(f"{fn}: got {got}, want {w}")
    if incl(fn, tm) <= 0:
        bad.append(f"{fn}: no io-time")
# The time in calls is at most the run's wall-clock time.
total_ns = d["nodes"][0]["inclusive"][tm]
if not 0 < total_ns < 30e9:
    bad.append(f"io-time total {total_ns}")
if bad:
    print(sys.argv[2] + ": " + "; ".join(bad), file=sys.stderr)
    sys.exit(1)
PY
done
# Under _FORTIFY_SOURCE, read() with a buffer of known size compiles to __read_chk, which
# glibc implements with its internal __read: it is wrapped itself.
cat >"$WORK/fortify.c" <<'C'
#include <fcntl.h>
#include <unistd.h>
static volatile unsigned long chunk = 4096; /* not a constant: the size is checked */
__attribute__((noinline)) static long fortified_reader(int fd)
{
	char buf[4096];
	long total = 0;
	for (int i = 0; i < 100; i++)
		total += read(fd, buf, chunk);
	return total + buf[0];
}
int main(void)
{
	int fd = open("/dev/zero", O_RDONLY);
	return fd < 0 || fortified_reader(fd) != 409600;
}
C
cc -O2 -D_FORTIFY_SOURCE=2 -g -o "$WORK/fortify" "$WORK/fortify.c" || fail "cannot build the fortified workload"
nm "$WORK/fortify" | grep -q __read_chk || skip "this compiler does not fortify read()"
run "$CALLPATH" record -q -e io -o "$WORK/f" -- "$WORK/fortify"
"$CALLPATH" report "$WORK/f" --format json --threshold 0 >"$WORK/f.json" || fail "report failed"
json_assert "$WORK/f.json" 'sum(n["inclusive"][[m["name"] for m in d["metrics"]].index("io-read-bytes")] for n in d["nodes"] if n["name"] == "fortified_reader" and n["kind"] == "procedure") == 409600' \
	"__read_chk reads not attributed to fortified_reader"
note "ok"
