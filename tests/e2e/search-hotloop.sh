#!/bin/bash
# callpath search (docs/cmd-search.md) on a program whose time is in the 3rd of the five
# loops of compute(): the search refines main > its loop > compute > compute's loops and
# reports that loop (at loop precision, by its source line) in its top 3; the four other
# loops are decided false. The result is printed as JSON and stored in the measurement
# directory (search.json, search.dot) and in the database's search table.
. "$(dirname "$0")/lib.sh"
require_built "$CALLPATH" "$CP_WORKLOADS/search-loops.O2"
src=$CP_SOURCE_DIR/tests/workloads/search-loops.c
hot=$(grep -n "loop 3: the hot one" "$src" | cut -d: -f1)
run "$CALLPATH" search -q --after 0.3 --for 12 --kill --format json -o "$WORK/m" -- \
	"$CP_WORKLOADS/search-loops.O2" 20
cp "$WORK/run.out" "$WORK/r.json"
json_assert "$WORK/r.json" "(any(b['kind'] == 'loop' and b['function'] == 'compute'
    and b['line'] in ($hot, $hot + 1) for b in d['bottlenecks'][:3]))" \
	"the hot loop (line $hot) is not in the top 3: $(head -c 3000 "$WORK/r.json")"
json_assert "$WORK/r.json" "(sum(1 for n in d['nodes'] if n['kind'] == 'loop' and
    n['function'] == 'compute' and n['state'] == 'false') == 4)" "the 4 cold loops are not false"
json_assert "$WORK/r.json" "(all(n['state'] in ('true', 'false') for n in d['nodes'])
    and not d['program_exited'] and d['experiments'] == len(d['nodes']))" "search not complete"
json_assert "$WORK/m/search.json" "(d['bottlenecks'] and d['version'] == 1)" "search.json"
grep -q '^digraph search' "$WORK/m/search.dot" || fail "no search.dot"
[ -s "$WORK/m/callpath.db" ] || fail "the measurement was not analyzed"
# the search table of the database: the same nodes, the same first bottleneck
python3 - "$WORK/m/callpath.db" "$WORK/r.json" <<'PY' || fail "search table"
import json, sqlite3, sys
d = json.load(open(sys.argv[2]))
rows = sqlite3.connect(sys.argv[1]).execute(
    "SELECT id, state, focus FROM search ORDER BY id").fetchall()
assert [(n["id"], n["state"], n["focus"]) for n in d["nodes"]] == rows, rows
top = sqlite3.connect(sys.argv[1]).execute("SELECT id FROM search WHERE rank = 1").fetchone()
assert top[0] == d["bottlenecks"][0]["id"], top
PY
note "ok"
