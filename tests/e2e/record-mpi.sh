#!/bin/bash
# Under `mpirun -np N callpath record ...` the ranks share one measurement directory and
# the summary is printed once (by rank 0, after the other ranks' files are complete), not
# N times interleaved; `report --rank R` shows one rank's program, and the ranks' views
# add up to the whole job's.
. "$(dirname "$0")/lib.sh"
require_tool mpirun
wl=$CP_WORKLOADS/chain.O2
cd "$WORK" || fail "no work directory"
mpirun --allow-run-as-root --oversubscribe -np 2 "$CALLPATH" record -- "$wl" 500 \
	>"$WORK/run.out" 2>"$WORK/run.err" || {
	cat "$WORK/run.out" "$WORK/run.err" >&2
	fail "mpirun failed"
}
[ "$(grep -c '^chain done' "$WORK/run.out")" = 2 ] || fail "both ranks' programs did not run"
err=$WORK/run.err
[ "$(grep -c '^measurement:' "$err")" = 1 ] || {
	cat "$err" >&2
	fail "the summary is not printed exactly once"
}
[ "$(grep -c '^callpath record: measurement in' "$err")" = 1 ] || fail "'measurement in' repeated"
grep -q '^processes: *2 (2 MPI ranks)' "$err" || fail "the summary does not cover both ranks"
dir=$(sed -n 's/^callpath record: measurement in //p' "$err")
[ "$(ls "$dir"/*.proc | wc -l)" = 2 ] || fail "not one directory for the job"
# Every file's header carries its rank and the job's size (format minor 1).
python3 - "$dir"/*.proc <<'PY' || fail "ranks in the file headers"
import struct, sys
ranks = []
for f in sys.argv[1:]:
    minor, rank, nranks = struct.unpack_from("<IiI", open(f, "rb").read(44), 32)
    assert minor >= 1 and nranks == 2, (f, minor, rank, nranks)
    ranks.append(rank)
assert sorted(ranks) == [0, 1], ranks
PY

samples() { sed -n 's/^metric cputime (ns): \([0-9]*\) samples.*/\1/p'; }
total=$(samples <"$err")
"$CALLPATH" report "$dir" --rank 0 >"$WORK/r0" 2>&1 || fail "report --rank 0"
"$CALLPATH" report "$dir" --rank 1 >"$WORK/r1" 2>&1 || fail "report --rank 1"
grep -q 'threads: 1 (of 2)' "$WORK/r0" || fail "--rank 0 is not one rank's thread"
s0=$(samples <"$WORK/r0")
s1=$(samples <"$WORK/r1")
[ "$s0" -gt 0 ] && [ "$s1" -gt 0 ] || fail "a rank without samples ($s0, $s1)"
[ $((s0 + s1)) = "$total" ] || fail "ranks' samples $s0 + $s1 != $total"
"$CALLPATH" report "$dir" --rank 2 >/dev/null 2>"$WORK/r2" && fail "--rank 2 of a 2-rank job"
grep -q "no MPI rank 2" "$WORK/r2" || fail "--rank 2: no clear error"

# Again into the same directory: the earlier job's files are replaced, not mixed in.
mpirun --allow-run-as-root --oversubscribe -np 2 "$CALLPATH" record -o "$dir" -- "$wl" 200 \
	>"$WORK/again.out" 2>"$WORK/again.err" || fail "second mpirun failed"
[ "$(ls "$dir"/*.proc | wc -l)" = 2 ] || fail "the earlier job's files were kept: $(ls "$dir")"
[ "$(grep -c '^measurement:' "$WORK/again.err")" = 1 ] || fail "second summary not once"
note "ok"
