#!/bin/bash
# `mpirun -np K callpath analyze --mpi DIR`: each rank correlates a share of the process
# images, a binomial tree merges the ranks' databases, rank 0 writes: the database must be
# the one `callpath analyze DIR` writes, row for row (every table, ids included), and every
# rank prints its share and its peak memory.
. "$(dirname "$0")/lib.sh"

require_built "$CALLPATH"
require_tool mpirun
[ -x "$CP_BUILD_DIR/callpath-analyze-mpi" ] ||
	skip "callpath-analyze-mpi is not built (no MPI library found at configure time)"
python3 -c "import sqlite3" 2>/dev/null || skip "python3 has no sqlite3 module"
mpi() { mpirun --allow-run-as-root --oversubscribe "$@"; }

# A real MPI job's measurement (rank in each process's environment record)...
mpi -np 2 "$CALLPATH" record -q -o "$WORK/job" -- "$CP_WORKLOADS/chain.O2" 300 >/dev/null ||
	fail "mpirun ... callpath record failed"
# ...and a synthetic job of 9 ranks x 3 threads with thousands of contexts.
synthetic_measurement "$WORK/ranks" ranks 9 3 200 800 15

compare() { # DIR NP
	local dir=$1 np=$2
	run "$CALLPATH" analyze -q -o "$WORK/serial.db" "$dir"
	mpi -np "$np" "$CALLPATH" analyze --mpi -o "$WORK/mpi.db" "$dir" >"$WORK/out" 2>"$WORK/err" || {
		cat "$WORK/out" "$WORK/err" >&2
		fail "$dir: analyze --mpi on $np ranks failed"
	}
	for ((r = 0; r < np; r++)); do
		grep -q "^callpath analyze --mpi: rank $r/$np: images .*peak RSS [0-9]* MB" "$WORK/err" ||
			fail "$dir: rank $r did not print its share and memory: $(cat "$WORK/err")"
	done
	grep -q "on $np ranks" "$WORK/out" || fail "$dir: no summary line from rank 0"
	python3 - "$WORK/serial.db" "$WORK/mpi.db" <<'PY' || fail "$dir: --mpi on $np ranks differs from analyze"
import sqlite3, sys
a = list(sqlite3.connect(sys.argv[1]).iterdump())
b = list(sqlite3.connect(sys.argv[2]).iterdump())
db = sqlite3.connect(sys.argv[2])
nprof, nscope = (db.execute(f"select count(*) from {t}").fetchone()[0] for t in ("profile", "scope"))
ranks = db.execute("select count(distinct pid) from profile").fetchone()[0]
print(f"{len(b)} rows, {nprof} profiles of {ranks} processes, {nscope} scopes")
assert ranks >= 2, "the measurement should have several processes"
diff = [(x, y) for x, y in zip(a, b) if x != y]
assert len(a) == len(b) and not diff, f"{len(a)} vs {len(b)} rows; first difference {diff[:1]}"
PY
}
compare "$WORK/job" 2
compare "$WORK/ranks" 3
note "ok"
