#!/bin/bash
# A thread made by raw clone(2) (no pthread_create, its creator's TLS) is adopted by the
# runtime's task scan: it gets its own finished thread file, named as the thread named
# itself, whose samples lie in its work function (address range from nm, not from callpath).
# "early": the thread starts in .preinit_array, before the runtime initialises; it is
# adopted at init (its file starts with the process's, not a scan period later).
# "sleep" (-e realtime): a raw-clone thread that only waits is found too (the scan then
# runs on wall-clock time).
source "$(dirname "$0")/lib.sh"
require_tool nm
for v in O2 O0 early; do
	prog=$CP_WORKLOADS/rawclone.${v/early/O2}
	require_built "$prog"
	early=0
	[ $v = early ] && early=1
	run env RAWCLONE_EARLY=$early "$CALLPATH" record -q -o "$WORK/m$v" -- "$prog" 150
	grep -q "rawclone done" "$WORK/run.out" || fail "program output missing ($v)"
	[ $v != early ] || grep -q "(early)" "$WORK/run.out" || fail "worker not started early"
	read -r lo size < <(nm -S "$prog" | awk '$4 ~ /^rawclone_work($|\.)/ {print $1, $2; exit}')
	[ -n "$lo" ] || fail "rawclone_work not in nm output of $prog"
	python3 - "$CP_SOURCE_DIR/tests/e2e/record-check.py" "$WORK/m$v" "$prog" "$lo" "$size" $early <<'PY' ||
import importlib.util, os, struct, sys
spec = importlib.util.spec_from_file_location("rc", sys.argv[1])
rc = importlib.util.module_from_spec(spec)
spec.loader.exec_module(rc)
d, prog, lo, size = sys.argv[2], sys.argv[3], int(sys.argv[4], 16), int(sys.argv[5], 16)
procs = [rc.read_proc(os.path.join(d, f)) for f in os.listdir(d) if f.endswith(".proc")]
assert len(procs) == 1, procs
exe_ids = [m["id"] for m in procs[0]["modules"] if os.path.realpath(m["path"]) == os.path.realpath(prog)]
assert exe_ids, "executable not among the modules"
infos = rc.read_dir(d)[1]  # thread files and threads packed into the process file
workers = [t for t in infos if t["name"] == "rawworker"]
assert len(workers) == 1, [t["name"] for t in infos]
w = workers[0]
assert w["flags"] & 1, "worker file not FINISHED"
assert w["samples"][0] >= 100, w["samples"]
assert w["tid"] != procs[0]["pid"], "worker has the main thread's tid"
# Self weight of the worker's nodes inside rawclone_work (offsets = link-time addresses).
data = rc.thread_data(d, w)
hsize = struct.unpack_from("<I", data, 16)[0]
used = struct.unpack_from("<Q", data, 24)[0]
ns, nm = 24 + 8 * w["nmetrics"], w["nmetrics"]
inside = total = 0
for off in range(hsize, used, ns):
    _, kind, _, module, _, offset = struct.unpack_from("<IHHIIQ", data, off)
    v = struct.unpack_from("<Q", data, off + 24)[0]
    total += v
    if module in exe_ids and lo <= offset < lo + size:
        inside += v
print("worker samples", w["samples"][0], "in rawclone_work", inside / total)
assert inside >= 0.9 * total, (inside, total)
if sys.argv[6] == "1":  # adopted by the scan at init, not by the first periodic scan
    late = (w["start_ns"] - procs[0]["start_ns"]) / 1e9
    print("early worker's file starts", late, "s after the process file")
    assert late < 0.05, late
PY
		fail "raw-clone thread not measured ($v)"
done
run env RAWCLONE_SLEEP=1 "$CALLPATH" record -q -e realtime -o "$WORK/ms" -- "$CP_WORKLOADS/rawclone.O2"
grep -q "rawclone done" "$WORK/run.out" || fail "program output missing (sleep)"
python3 "$CP_SOURCE_DIR/tests/e2e/record-check.py" "$WORK/ms" >"$WORK/ms.json" || fail "invalid files (sleep)"
# Measured wall-clock time (samples weighted by their timer overruns, so a loaded machine
# that delivers fewer signals still adds up): at least 0.3 s of the ~1 s wait.
json_assert "$WORK/ms.json" '[t["totals"][0] >= 0.3e9 for t in d["threads"] if t["name"] == "rawworker"] == [True]' \
	"waiting raw-clone thread not measured with -e realtime"
exit 0
