#!/bin/bash
# MPI x OpenMP, 2 ranks x 2 threads (MPI_Init_thread(MPI_THREAD_FUNNELED)): the wrapper of
# MPI_Init_thread measures and confirms the rank; each rank's OpenMP threads are its
# threads (--thread R.T), both run the region's work; reports by rank and by thread add
# up to the job's; every thread's work of every rank lies under its region's context,
# main > region > parallel region in region > work (never under a thread root).
. "$(dirname "$0")/lib.sh"
require_mpi
wl=$CP_WORKLOADS/mpi-hybrid.O2
[ -x "$wl" ] || skip "the MPI x OpenMP workload was not built"
export OMP_NUM_THREADS=2
mpi_run job mpirun -np 2 -x OMP_NUM_THREADS "$CALLPATH" record -o "$WORK/m" -- "$wl" 60
grep -q "hybrid done: 2 ranks x 2 threads" "$WORK/job.out" || fail "the program did not run 2 x 2"
"$CALLPATH" report "$WORK/m" --format json --threshold 0 >"$WORK/all.json" 2>/dev/null || fail "report"
for r in 0 1; do
	mpi_report "$WORK/m" $r "$WORK/r$r.json"
	n=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['summary']['threads'])" "$WORK/r$r.json")
	for t in $(seq 0 $((n - 1))); do mpi_report "$WORK/m" $r "$WORK/r$r.t$t.json" --thread $r.$t; done
	python3 - "$WORK" $r $n "$(dirname "$0")" <<'PY' || fail "rank $r: threads"
import sys
sys.path.insert(0, sys.argv[4])
from importlib import import_module
m = import_module("mpi-check")
w, r, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rank = m.Report(f"{w}/r{r}.json")
threads = [m.Report(f"{w}/r{r}.t{t}.json") for t in range(n)]
workers = [t for t in threads if t.incl("work", "cputime") > 0]
assert len(workers) >= 2, f"{len(workers)} threads of rank {r} ran work"
assert sum(t.total["cputime"] for t in threads) == rank.total["cputime"]
assert rank.incl("MPI_Init_thread", "mpi-calls") == 1
assert rank.incl("MPI_Allreduce", "mpi-sent-bytes") == 8
for k, t in enumerate(workers):
    w = t.incl("work", "cputime")
    inside = t.incl("work", "cputime", under="parallel region in region")
    assert inside == w, f"rank {r}: {w - inside} ns of a thread's work outside its region"
    paths = [t.path(n) for n in t.nodes.values()
             if n["name"] == "parallel region in region" and n["kind"] == "procedure"]
    assert paths and all("main" in p and "region" in p[:-1] for p in paths), paths
PY
done
python3 - "$WORK" "$(dirname "$0")" <<'PY' || fail "ranks do not add up to the job"
import sys
sys.path.insert(0, sys.argv[2])
from importlib import import_module
m = import_module("mpi-check")
w = sys.argv[1]
job, r0, r1 = (m.Report(f"{w}/{f}.json") for f in ("all", "r0", "r1"))
for metric in ("cputime", "mpi-time", "mpi-calls"):
    assert job.total[metric] == r0.total[metric] + r1.total[metric], metric
PY
note "ok"
