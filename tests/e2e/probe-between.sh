#!/bin/bash
# A probed function called from a probed caller through unprobed frames keeps them in its
# calling context: with main and heavy3 probed, heavy3's context is main > run > heavy3
# (the context walk unwinds from the call up to the probed caller's return-address slot;
# it used to keep the call site alone, which dropped main). The walk stops there whatever
# the depth, rather than unwinding the whole stack through every probed frame.
. "$(dirname "$0")/lib.sh"
require_built "$CALLPATH" "$CP_WORKLOADS/chain.O2" "$CP_WORKLOADS/recurse.O2"
run "$CALLPATH" probe -q -o "$WORK/m" -f main -f heavy3 -- "$CP_WORKLOADS/chain.O2" 200
python3 "$CP_SOURCE_DIR/tests/e2e/probe-tree.py" "$WORK/m" --expect 'main > run > heavy3=200' ||
	fail "heavy3's context lost the frames between it and main: $(python3 \
		"$CP_SOURCE_DIR/tests/e2e/probe-tree.py" "$WORK/m")"
# Deep recursion through probed frames: every level below its probed caller, exact counts.
run "$CALLPATH" probe -q -o "$WORK/r" -f main -f bottom -- "$CP_WORKLOADS/recurse.O2" 20 300
python3 "$CP_SOURCE_DIR/tests/e2e/probe-tree.py" "$WORK/r" >"$WORK/r.tree"
python3 - "$WORK/r.tree" <<'PY' || fail "recursion: $(cut -c1-300 "$WORK/r.tree")"
import sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1])]
bottom = [r for r in rows if r[1].endswith("> bottom")]
assert len(bottom) == 1 and int(bottom[0][2]) == 20, bottom
path = bottom[0][1].split(" > ")
assert path[path.index("main") + 1:].count("descend") >= 300, path[:8]
PY
note "ok"
