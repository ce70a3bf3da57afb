#!/bin/bash
# A Fortran MPI program (`use mpi`, built with mpif90): Open MPI's Fortran functions call
# PMPI_* directly, past the C wrappers, so libcallpath-mpi.so wraps mpi_send_ & co. The
# program needs libmpi_mpifh only (no libmpi in its DT_NEEDED): record still preloads the
# MPI library. Bytes per path are exactly the program's: 4 messages of 500 doubles from
# rank 1's sender to rank 0's receiver, one Allreduce of 500 doubles each. And `use
# mpi_f08` (its mpi_send_f08_ calls ompi_send_f, wrapped too): 3 messages of 250 doubles.
# The receives are also waits on MPI_COMM_WORLD, tag 5, from rank 1 (report --view sync).
. "$(dirname "$0")/lib.sh"
require_mpi
wl=$CP_WORKLOADS/mpi-fortran.O2
[ -x "$wl" ] || skip "no mpif90: the Fortran workload was not built"
readelf -d "$wl" | grep -q 'NEEDED.*libmpi\.so' && note "(the program needs libmpi itself)"
mpi_run job mpirun -np 2 "$CALLPATH" record -o "$WORK/m" -- "$wl"
grep -q "fortran done: 2 ranks" "$WORK/job.out" || fail "the program did not finish"
mpi_report "$WORK/m" 0 "$WORK/r0.json"
mpi_report "$WORK/m" 1 "$WORK/r1.json"
check() { python3 "$(dirname "$0")/mpi-check.py" "$@" || fail "$1: wrong MPI metrics"; }
check "$WORK/r0.json" \
	"r.incl('mpi_recv_', 'mpi-recv-bytes', under='fortran_mpi') == 4 * 4000" \
	"r.incl('mpi_recv_', 'mpi-calls', under='fortran_mpi') == 4" \
	"r.incl('mpi_allreduce_', 'mpi-sent-bytes', under='fortran_mpi') == 4000" \
	"r.incl('mpi_init_', 'mpi-calls') == 1" \
	"r.total['mpi-sent-bytes'] == 4000"
check "$WORK/r1.json" \
	"r.incl('mpi_send_', 'mpi-sent-bytes', under='fortran_mpi') == 4 * 4000" \
	"r.incl('mpi_send_', 'mpi-sent-msgs', under='fortran_mpi') == 4" \
	"r.total['mpi-recv-bytes'] == 4000"
# The waits by synchronization object (the Fortran wrappers name communicator, tag and
# peer too): rank 0's 4 receives from rank 1 with tag 5, all of mpi_recv_'s mpi-time.
"$CALLPATH" report "$WORK/m" --view sync --format json --rank 0 >"$WORK/s0.json" ||
	fail "report --view sync"
python3 - "$WORK/s0.json" "$WORK/r0.json" "$(dirname "$0")" <<'PY' || fail "Fortran sync objects: $(cat "$WORK/s0.json")"
import json, sys
sys.path.insert(0, sys.argv[3])
from importlib import import_module
r = import_module("mpi-check").Report(sys.argv[2])
objs = {o["name"]: o for o in json.load(open(sys.argv[1]))["objects"]}
o = objs["MPI_COMM_WORLD tag 5 from rank 1"]
assert o["kind"] == "mpi-recv" and o["waits"] == 4 and o["peer"] == 1 and o["tag"] == 5, o
assert o["wait_ns"] == r.incl("mpi_recv_", "mpi-time", under="fortran_mpi"), o
assert "fortran.f90" in o["sites"][0]["site"], o
assert objs["MPI_COMM_WORLD"]["kind"] == "mpi-coll" and objs["MPI_COMM_WORLD"]["waits"] == 1
PY

wl=$CP_WORKLOADS/mpi-fortran08.O2
[ -x "$wl" ] || fail "the mpi_f08 workload was not built (mpif90 is there)"
mpi_run f08 mpirun -np 2 "$CALLPATH" record -o "$WORK/f" -- "$wl"
grep -q "fortran08 done" "$WORK/f08.out" || fail "the mpi_f08 program did not finish"
mpi_report "$WORK/f" 0 "$WORK/f0.json"
mpi_report "$WORK/f" 1 "$WORK/f1.json"
check "$WORK/f0.json" \
	"r.incl('ompi_recv_f', 'mpi-recv-bytes', under='fortran08') == 3 * 2000" \
	"r.incl('ompi_recv_f', 'mpi-calls', under='fortran08') == 3" \
	"r.incl('ompi_barrier_f', 'mpi-calls', under='fortran08') == 1"
check "$WORK/f1.json" "r.incl('ompi_send_f', 'mpi-sent-bytes', under='fortran08') == 3 * 2000"
note "ok"
