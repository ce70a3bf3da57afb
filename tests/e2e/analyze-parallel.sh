#!/bin/bash
# `callpath analyze -j N` correlates pieces of the measurement on N threads and merges their
# databases in order: the database must be the one a single thread makes, row for row (every
# table, ids included), for the threads of one process and for many process images.
. "$(dirname "$0")/lib.sh"

require_built "$CALLPATH"
require_built "$CP_WORKLOADS/threads.O2"
python3 -c "import sqlite3" 2>/dev/null || skip "python3 has no sqlite3 module"

run "$CALLPATH" record -q -o "$WORK/thr" -- "$CP_WORKLOADS/threads.O2" 5
# Synthetic measurements with thousands of contexts (lib.sh, bench/analyze/gen.c).
synthetic_measurement "$WORK/gthr" threads 7 6000 1500 12 2
synthetic_measurement "$WORK/gprocs" procs 13 150

compare() { # DIR J...: -j 1 against each -j J
	local dir=$1
	shift
	run "$CALLPATH" analyze -q -j 1 -o "$WORK/j1.db" "$dir"
	for j in "$@"; do
		run "$CALLPATH" analyze -q -j $j -o "$WORK/j$j.db" "$dir"
		python3 - "$WORK/j1.db" "$WORK/j$j.db" <<'PY' || fail "$dir: -j $j differs from -j 1"
import sqlite3, sys
def dump(path):
    return list(sqlite3.connect(path).iterdump())
a, b = dump(sys.argv[1]), dump(sys.argv[2])
db = sqlite3.connect(sys.argv[1])
nprof = db.execute("select count(*) from profile").fetchone()[0]
nscope = db.execute("select count(*) from scope").fetchone()[0]
print(f"{sys.argv[2]}: {len(b)} rows, {nprof} profiles, {nscope} scopes")
assert nprof >= 5 and nscope > 10, "too small a measurement to compare"
diff = [(x, y) for x, y in zip(a, b) if x != y]
assert len(a) == len(b) and not diff, f"{len(a)} vs {len(b)} rows; first difference {diff[:1]}"
PY
	done
}
compare "$WORK/thr" 2
compare "$WORK/gthr" 2 5
compare "$WORK/gprocs" 3
note "ok"
