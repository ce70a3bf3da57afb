#!/bin/bash
# `callpath probe -f 'MPI_*'` on an MPI program under mpirun (iPath's use: exact MPI call
# counts and times per path): each rank's calls of each MPI function, by path, are
# exactly the program's. Open MPI's MPI_X is an alias of PMPI_X, so a node may carry
# either name.
. "$(dirname "$0")/lib.sh"
require_mpi
wl=$CP_WORKLOADS/mpi-late-sender.O2
mpi_run job mpirun -np 2 "$CALLPATH" probe -f 'MPI_*' -o "$WORK/p" -- "$wl" 3 20
[ "$(grep -c '^MPI job:' "$WORK/job.err")" = 1 ] || fail "the job summary is not printed once"
mpi_report "$WORK/p" 0 "$WORK/r0.json"
mpi_report "$WORK/p" 1 "$WORK/r1.json"
calls() { echo "(r.incl('MPI_$1', 'calls', under='$2') + r.incl('PMPI_$1', 'calls', under='$2'))"; }
python3 "$(dirname "$0")/mpi-check.py" "$WORK/r0.json" \
	"$(calls Recv late_recv) == 3" "$(calls Send main) == 0" \
	"$(calls Allreduce imbalanced) == 1" "$(calls Isend exchange) == 1" \
	"$(calls Waitall exchange) == 1" "$(calls Init main) == 1" || fail "rank 0's MPI calls"
python3 "$(dirname "$0")/mpi-check.py" "$WORK/r1.json" \
	"$(calls Send late_send) == 3" "$(calls Recv main) == 0" \
	"$(calls Allreduce imbalanced) == 1" || fail "rank 1's MPI calls"
note "ok"
