#!/bin/bash
# A Fortran MPI program (`use mpi`, built with mpif90): Open MPI's Fortran functions call
# PMPI_* directly, past the C wrappers, so libcallpath-mpi.so wraps mpi_send_ & co. The
# program needs libmpi_mpifh only (no libmpi in its DT_NEEDED): record still preloads the
# MPI library. Bytes per path are exactly the program's: 4 messages of 500 doubles from
# rank 1's sender to rank 0's receiver, one Allreduce of 500 doubles each. And `use
# mpi_f08` (its mpi_send_f08_ calls ompi_send_f, wrapped too): 3 messages of 250 doubles.
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
