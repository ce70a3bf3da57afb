#!/bin/bash
# A stripped executable: its own procedures have no symbols left, so they show by address
# (sub_ADDR for a function known from its unwind info, [module+0xOFFSET] otherwise), never
# under a wrong name, while libc's exported names still show; the 3:1 split of chain.O2
# is still visible.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/report-helpers/record.sh"

require_tool strip
# A private structure cache: the stripped copy keeps chain.O2's build-id, and a cached
# structure of the unstripped file (keyed by build-id) would bring its names back.
export XDG_CACHE_HOME=$WORK/cache
cp "$CP_WORKLOADS/chain.O2" "$WORK/chain.stripped"
strip "$WORK/chain.stripped"
report_record "$WORK/m" "$WORK/chain.stripped" 1000
report_json "$WORK/td.json" "$WORK/m"
python3 - "$WORK/td.json" <<'PY' || fail "stripped binary report is wrong"
import json, re, sys
d = json.load(open(sys.argv[1]))
procs = [n for n in d["nodes"] if n["kind"] == "procedure"]
names = {n["name"] for n in procs}
assert not names & {"heavy3", "light1", "run"}, "names of a stripped binary?"
own = [n for n in procs if (n["module"] or "").endswith("/chain.stripped")]
assert own and all(re.fullmatch(r"sub_[0-9a-f]+|\[chain\.stripped\+0x[0-9a-f]+\]", n["name"])
                   for n in own), sorted(names)
assert own, sorted(names)
assert any("libc_start" in x for x in names), sorted(names)
# The two hottest leaf procedures of the executable still split about 3:1.
total = d["nodes"][0]["inclusive"][0]
leaves = sorted((n["exclusive"][0] for n in own), reverse=True)
print("hottest unnamed procedures:", leaves[:3], "of", total)
assert len(leaves) >= 2 and 2.4 <= leaves[0] / max(leaves[1], 1) <= 3.6, leaves[:3]
PY
note "ok"
