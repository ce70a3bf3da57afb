#!/bin/bash
# `callpath record -- mpirun -np 4 PROGRAM` (4 ranks on 2 cores): one measurement
# directory for the job (the launcher's fork children exec the ranks), the summary once,
# with the ranks measured, their MPI share and the imbalance over ranks of the hottest
# contexts. `report --rank R`, `--thread R.T` select a rank's threads; `--stat max|min
# --stat-over ranks` agree with the per-rank reports (an independent computation: each
# rank's report sums only its own threads).
. "$(dirname "$0")/lib.sh"
require_mpi
wl=$CP_WORKLOADS/mpi-late-sender.O2
dir=$WORK/m
mpi_run job "$CALLPATH" record -o "$dir" -- mpirun -np 4 "$wl" 3 30
grep -q "late-sender done: 4 ranks" "$WORK/job.out" || fail "the program did not finish"
err=$WORK/job.err
[ "$(grep -c '^MPI job:' "$err")" = 1 ] || { cat "$err" >&2; fail "the job summary is not printed once"; }
grep -q '^MPI job: *4 of 4 ranks measured' "$err" || fail "not 4 of 4 ranks measured"
grep -q '^MPI calls: .*% of the ranks. time (mpi-time' "$err" || fail "no MPI share"
grep -q '^imbalance over 4 ranks (cputime' "$err" || fail "no imbalance over ranks"
grep -qE '^ +[0-9.]+s +[0-9.]+s +[0-9.]+s  rank [0-3] +4  main$' "$err" ||
	fail "main's imbalance row (min/mean/max, rank, 4 ranks) missing"
grep -q 'missing\|incomplete\|another program' "$err" && fail "a complete job reported as broken"

for r in 0 1 2 3; do mpi_report "$dir" $r "$WORK/r$r.json"; done
mpi_report "$dir" 1 "$WORK/t10.json" --thread 1.0
mpi_report "$dir" 1 "$WORK/t1all.json" --thread 1.all
"$CALLPATH" report "$dir" --thread 9.0 >/dev/null 2>"$WORK/e9" && fail "--thread 9.0 of 4 ranks"
grep -q "no MPI rank 9" "$WORK/e9" || fail "--thread 9.0: no clear error"
for s in max min sum; do
	"$CALLPATH" report "$dir" --format json --threshold 0 --stat $s --stat-over ranks \
		>"$WORK/$s.json" 2>"$WORK/e" || fail "--stat $s --stat-over ranks: $(cat "$WORK/e")"
done
"$CALLPATH" report "$dir" --stat max --stat-over ranks --depth 1 | grep -q '(max over 4 ranks)' ||
	fail "the header does not say the statistic is over ranks"
python3 - "$WORK" "$(dirname "$0")" <<'PY' || fail "statistics over ranks"
import sys
sys.path.insert(0, sys.argv[2])
from importlib import import_module
m = import_module("mpi-check")
w = sys.argv[1]
ranks = [m.Report(f"{w}/r{r}.json") for r in range(4)]
mx, mn, sm = (m.Report(f"{w}/{s}.json") for s in ("max", "min", "sum"))
# per rank: a rank's own report; over ranks: the statistic of those
for fn, metric in [("main", "cputime"), ("MPI_Allreduce", "mpi-time"), ("MPI_Recv", "mpi-time"),
                   ("exchange", "mpi-sent-bytes"), ("MPI_Init", "mpi-calls")]:
    per = [r.incl(fn, metric) for r in ranks]
    ran = [v for v in per if v > 0]
    assert abs(mx.incl(fn, metric) - max(ran)) <= 1e-6 * max(ran), (fn, metric, per)
    assert abs(mn.incl(fn, metric) - min(ran)) <= 1e-6 * max(ran), (fn, metric, per)
    assert abs(sm.incl(fn, metric) - sum(per)) <= 1e-6 * max(ran), (fn, metric, per)
# only rank 0 receives from the late sender, only rank 1 sends late
assert ranks[0].incl("late_recv", "mpi-calls") > 0 and ranks[1].incl("late_send", "mpi-calls") > 0
assert all(r.incl("late_recv", "mpi-calls") == 0 for r in ranks[1:])
# --thread 1.0 is one thread of rank 1, --thread 1.all all of them
t10, t1 = m.Report(f"{w}/t10.json"), m.Report(f"{w}/t1all.json")
assert t1.total["cputime"] == ranks[1].total["cputime"]
assert 0 < t10.total["cputime"] <= t1.total["cputime"]
assert t10.incl("late_send", "mpi-calls") == ranks[1].incl("late_send", "mpi-calls")
PY
note "ok"
