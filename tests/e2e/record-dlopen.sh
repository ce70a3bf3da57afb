#!/bin/bash
# dlopen/dlclose: a library loaded twice (elsewhere the second time) gets two module ids,
# both unloaded (each unload ordered between the loads), and samples resolve into both
# epochs.
source "$(dirname "$0")/lib.sh"
CHECK="python3 $CP_SOURCE_DIR/tests/e2e/record-check.py"
prog=$CP_WORKLOADS/dlopen.O2
require_built "$prog"
run "$CALLPATH" record -q -o "$WORK/m" -- "$prog"
grep -q "dlopen done" "$WORK/run.out" || fail "program failed"
$CHECK "$WORK/m" >"$WORK/m.json" || fail "measurement invalid"
python3 - "$WORK/m.json" "$WORK/m" <<'PY' || fail "dlopen epochs wrong"
import json, os, struct, sys
d = json.load(open(sys.argv[1]))
p = d["procs"][0]
libs = [m for m in p["modules"] if m["path"].endswith("libdlwork.so")]
assert len(libs) == 2 and libs[0]["id"] != libs[1]["id"], libs
assert set(p["unloads"]) >= {m["id"] for m in libs}, p["unloads"]
# load_seq orders loads and unloads: load 1 < unload 1 < load 2 < unload 2.
us = p["unload_seq"]
order = [libs[0]["seq"], us[str(libs[0]["id"])], libs[1]["seq"], us[str(libs[1]["id"])]]
assert all(a < b for a, b in zip(order, order[1:])), order
# Read the nodes: PC samples must land in both module ids.
t = d["threads"][0]
data = open(os.path.join(sys.argv[2], t["file"]), "rb").read()  # a file, or a packed thread
data = data[t["data_offset"]: t["data_offset"] + t["used"]]
hsize, used = struct.unpack_from("<I", data, 16)[0], struct.unpack_from("<Q", data, 24)[0]
ns = 24 + 8 * t["nmetrics"]
hit = {}
for off in range(hsize, used, ns):
    parent, kind, _, module, _, offset = struct.unpack_from("<IHHIIQ", data, off)
    val = struct.unpack_from("<Q", data, off + 24)[0]
    if kind == 2:
        hit[module] = hit.get(module, 0) + val
for m in libs:
    assert hit.get(m["id"], 0) > 0, (m, hit)
PY
exit 0
