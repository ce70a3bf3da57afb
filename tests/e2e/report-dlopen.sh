#!/bin/bash
# dlopen.O2 loads libdlwork.so, calls dl_work, unloads it, and loads it again (a new module
# id, likely another address): the two epochs are one library file, so the flat view has
# one libdlwork.so module and one dl_work holding nearly all the time, while the top-down
# view keeps the two calls from main apart (two call sites, about half each).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/report-helpers/record.sh"

report_record "$WORK/m" "$CP_WORKLOADS/dlopen.O2"
report_json "$WORK/flat.json" "$WORK/m" --view flat
report_json "$WORK/td.json" "$WORK/m" --view top-down
python3 - "$WORK/flat.json" "$WORK/td.json" <<'PY' || fail "dlopen epochs are not merged right"
import json, sys
flat, td = (json.load(open(p)) for p in sys.argv[1:])
mods = [n for n in flat["nodes"] if n["kind"] == "module" and n["name"].endswith("/libdlwork.so")]
assert len(mods) == 1, [m["name"] for m in mods]
work = [n for n in flat["nodes"] if n["kind"] == "procedure" and n["name"] == "dl_work"]
assert len(work) == 1 and work[0]["inclusive_pct"][0] > 90, work
calls = [n for n in td["nodes"] if n["kind"] == "procedure" and n["name"] == "dl_work"]
pcts = sorted(n["inclusive_pct"][0] for n in calls)
print("dl_work per call site:", pcts)
assert len(calls) == 2 and all(25 <= p <= 75 for p in pcts), pcts
assert len({(n["file"], n["line"]) for n in td["nodes"] if n["name"] == "call_lib"}) == 2
PY
note "ok"
