#!/bin/bash
# libcallpath-mpi.so, preloaded by `record` because the program needs libmpi, measures
# every MPI call by calling context: a planted late sender (rank 1 computes before each
# send) shows as rank 0's mpi-time in MPI_Recv under late_recv, and rank 1 as the one with
# the extra compute; an imbalanced Allreduce (rank r computes 2r+1 units) is waited in by
# rank 0; Isend/Irecv + Waitall. Bytes and messages per path are exactly what the program
# sent (the workload's buffer sizes), and time bounds are loose fractions of the planted
# waits (a loaded machine only lengthens them).
. "$(dirname "$0")/lib.sh"
require_mpi
wl=$CP_WORKLOADS/mpi-late-sender.O2
rounds=4 ms=40
dir=$WORK/m
mpi_run job mpirun -np 2 "$CALLPATH" record -o "$dir" -- "$wl" $rounds $ms
grep -q "late-sender done: 2 ranks" "$WORK/job.out" || fail "the program did not finish"
mpi_report "$dir" 0 "$WORK/r0.json"
mpi_report "$dir" 1 "$WORK/r1.json"
check() { python3 "$(dirname "$0")/mpi-check.py" "$@" || fail "$1: wrong MPI metrics"; }
late=$((rounds * ms * 1000000 / 2))
# Rank 0 waits in MPI_Recv for the late sender; bytes: rounds x 1000 doubles.
check "$WORK/r0.json" \
	"r.incl('MPI_Recv', 'mpi-time', under='late_recv') >= $late" \
	"r.incl('MPI_Recv', 'mpi-recv-bytes', under='late_recv') == $rounds * 8000" \
	"r.incl('MPI_Recv', 'mpi-recv-msgs', under='late_recv') == $rounds" \
	"r.incl('MPI_Recv', 'mpi-calls', under='late_recv') == $rounds" \
	"r.incl('late_send', 'cputime') == 0" \
	"r.incl('MPI_Allreduce', 'mpi-sent-bytes', under='imbalanced') == 256 * 8" \
	"r.incl('MPI_Allreduce', 'mpi-recv-bytes', under='imbalanced') == 256 * 8" \
	"r.incl('MPI_Isend', 'mpi-sent-bytes', under='exchange') == 300 * 4" \
	"r.incl('MPI_Irecv', 'mpi-recv-bytes', under='exchange') == 300 * 4" \
	"r.incl('MPI_Waitall', 'mpi-calls', under='exchange') == 1" \
	"r.total['mpi-sent-bytes'] == 256 * 8 + 300 * 4" \
	"r.total['mpi-sent-msgs'] == 2"
# Rank 1: the sender, with the compute before each send; it does not wait for rank 0.
check "$WORK/r1.json" \
	"r.incl('compute', 'cputime', under='late_send') > 0" \
	"r.incl('MPI_Send', 'mpi-sent-bytes', under='late_send') == $rounds * 8000" \
	"r.incl('MPI_Send', 'mpi-sent-msgs', under='late_send') == $rounds" \
	"r.incl('MPI_Recv', 'mpi-calls') == 0" \
	"r.total['mpi-recv-bytes'] == 256 * 8 + 300 * 4"
# The Allreduce: rank 0 computed two units less and waits for rank 1 in it.
python3 - "$WORK/r0.json" "$WORK/r1.json" "$(dirname "$0")" <<'PY' || fail "imbalanced Allreduce"
import sys
sys.path.insert(0, sys.argv[3])
from importlib import import_module
m = import_module("mpi-check")
w0, w1 = (m.Report(f).incl("MPI_Allreduce", "mpi-time", under="imbalanced") for f in sys.argv[1:3])
assert w0 > w1 and w0 >= 20e6, (w0, w1)
PY
note "ok"
