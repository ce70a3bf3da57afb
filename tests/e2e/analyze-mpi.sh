#!/bin/bash
# `mpirun -np K callpath analyze --mpi DIR`: each rank correlates a share of the process
# images, a binomial tree merges the ranks' databases, rank 0 writes: the database must be
# the one `callpath analyze DIR` writes, row for row (every table, ids included), and every
# rank prints its share and its peak memory.
. "$(dirname "$0")/lib.sh"

require_built "$CALLPATH"
require_tool mpirun
require_tool cc
[ -x "$CP_BUILD_DIR/callpath-analyze-mpi" ] ||
	skip "callpath-analyze-mpi is not built (no MPI library found at configure time)"
python3 -c "import sqlite3" 2>/dev/null || skip "python3 has no sqlite3 module"
mpi() { mpirun --allow-run-as-root --oversubscribe "$@"; }

# A real MPI job's measurement (rank in each process's environment record)...
mpi -np 2 "$CALLPATH" record -q -o "$WORK/job" -- "$CP_WORKLOADS/chain.O2" 300 >/dev/null ||
	fail "mpirun ... callpath record failed"
# ...and a synthetic one of 13 process images with thousands of contexts (bench/analyze/gen.c)
cc -O2 -D_GNU_SOURCE -I"$CP_SOURCE_DIR/src" "$CP_SOURCE_DIR/bench/analyze/gen.c" -o "$WORK/gen" -lm ||
	fail "cannot build bench/analyze/gen.c"
libc=$(readlink -f /lib/x86_64-linux-gnu/libc.so.6)
bid=$(readelf -n "$libc" | awk '/Build ID/ {print $3}')
read -r lo size < <(readelf -SW "$libc" | awk '$2 == ".text" {print "0x"$4, "0x"$6}')
hi=$(printf '0x%x' $((lo + size)))
run "$WORK/gen" "$WORK/procs" "$libc" "$bid" "$lo" "$hi" procs 13 150

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
compare "$WORK/procs" 2
compare "$WORK/procs" 3
note "ok"
