#!/bin/bash
# MPI jobs gone wrong. A rank killed mid-run (SIGKILL): the job's summary names it as
# incomplete and its samples up to then are kept. A measurement missing a rank's files:
# the report names the missing rank (the job's size is in every file's header). Ranks
# running different binaries: the summary names the rank that runs another program.
. "$(dirname "$0")/lib.sh"
require_mpi
wl=$CP_WORKLOADS/mpi-late-sender.O2

# 1. Rank 1 (the late sender, 200 rounds of 40 ms) is killed after its first second.
mkdir "$WORK/pids"
LATE_SENDER_PIDS=$WORK/pids "$CALLPATH" record -o "$WORK/k" -- mpirun -np 3 "$wl" 200 40 \
	>"$WORK/k.out" 2>"$WORK/k.err" &
rec=$!
for _ in $(seq 100); do [ -s "$WORK/pids/rank1" ] && break; sleep 0.1; done
[ -s "$WORK/pids/rank1" ] || { kill $rec; fail "rank 1 did not start"; }
sleep 1
kill -KILL "$(cat "$WORK/pids/rank1")"
wait $rec
grep -q "^MPI job: *3 of 3 ranks measured" "$WORK/k.err" || { cat "$WORK/k.err" >&2; fail "no job summary after the kill"; }
grep -qE "^  incomplete: rank ([0-9], )*1(,|$| )" "$WORK/k.err" || { cat "$WORK/k.err" >&2; fail "the killed rank is not named incomplete"; }
mpi_report "$WORK/k" 1 "$WORK/k1.json"
python3 "$(dirname "$0")/mpi-check.py" "$WORK/k1.json" \
	"r.incl('compute', 'cputime', under='late_send') > 0" \
	"r.incl('MPI_Send', 'mpi-calls', under='late_send') >= 1" || fail "the killed rank's samples are lost"

# 2. A finished 3-rank job without rank 2's files.
mpirun -np 3 "$CALLPATH" record -q -o "$WORK/m" -- "$wl" 2 10 >/dev/null 2>&1 || fail "mpirun failed"
python3 - "$WORK/m" <<'PY' || fail "could not remove rank 2's files"
import glob, os, struct, sys
gone = 0
for f in glob.glob(sys.argv[1] + "/*.proc"):
    minor, rank, n = struct.unpack_from("<IiI", open(f, "rb").read(44), 32)
    if rank == 2:
        pid_gen = os.path.basename(f)[:-len(".proc")]
        for g in glob.glob(f"{sys.argv[1]}/{pid_gen}.*"):
            os.unlink(g)
        gone += 1
assert gone == 1, gone
os.unlink(sys.argv[1] + "/callpath.db")
PY
"$CALLPATH" report "$WORK/m" --depth 1 >"$WORK/m.out" 2>&1 || fail "report without rank 2: $(cat "$WORK/m.out")"
grep -q "^MPI job: *2 of 3 ranks measured" "$WORK/m.out" || { cat "$WORK/m.out" >&2; fail "not '2 of 3 ranks'"; }
grep -q "^  missing: rank 2 (no measurement files)" "$WORK/m.out" || fail "the missing rank is not named"

# 3. Rank 1 runs another binary (a copy of the program, as on a node with another build).
cp "$wl" "$WORK/other"
mpirun -np 1 "$CALLPATH" record -o "$WORK/x" -- "$wl" 2 10 : \
	-np 1 "$CALLPATH" record -o "$WORK/x" -- "$WORK/other" 2 10 >"$WORK/x.out" 2>"$WORK/x.err" ||
	fail "MPMD run failed: $(cat "$WORK/x.err")"
grep -q "^  rank 1 runs another program: .*/other (rank 0: .*/mpi-late-sender.O2)" "$WORK/x.err" ||
	{ cat "$WORK/x.err" >&2; fail "the rank with another binary is not named"; }
note "ok"
