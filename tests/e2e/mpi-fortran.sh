#!/bin/bash
# A Fortran MPI program (`use mpi`, built with mpif90): Open MPI's Fortran functions call
# PMPI_* directly, past the C wrappers, so libcallpath-mpi.so wraps mpi_send_ & co. The
# program needs libmpi_mpifh only (no libmpi in its DT_NEEDED): record still preloads the
# MPI library. Bytes per path are exactly the program's: 4 messages of 500 doubles from
# rank 1's sender to rank 0's receiver, one Allreduce of 500 doubles each.
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
note "ok"
