#!/bin/bash
# MPI waits by synchronization object: the communicator, tag and peer of each blocking MPI
# call (libcallpath-mpi.so), in `report --view sync` (text and JSON) read from the
# measurement directory, from `callpath analyze`'s database and from `analyze --mpi`'s.
# tests/workloads/mpi/syncobj.c times its own waits with MPI_Wtime: rank 0 in MPI_Recv on
# MPI_COMM_WORLD tag 7 from rank 1 and in MPI_Barrier on an unnamed split (comm#2), rank 1
# in MPI_Wait for an Irecv on a duplicate named "rows" (tag 3 from rank 0). Each object
# must be there under that name, in that rank's process, with exactly the program's number
# of waits and a wait time close to the program's own: the wrapper's clock reads are inside
# the program's MPI_Wtime bracket, so the recorded time is at most the program's (+2 ms for
# the clocks' granularity) and less only by what runs between the two reads (the wrapper's
# bookkeeping, microseconds, and a preemption there on a loaded machine: up to 15 % or 25 ms
# over the 5 waits).
# Then `callpath search` on bench/search/mpi-late-sender refines ExcessiveSyncWaiting on
# rank 1 into its communicator and tag.
. "$(dirname "$0")/lib.sh"
require_mpi
wl=$CP_WORKLOADS/mpi-syncobj.O2
require_built "$wl"
dir=$WORK/m
mpi_run job mpirun -np 2 "$CALLPATH" record -q -o "$dir" -- "$wl" 5 40
grep "^waited" "$WORK/job.out" >"$WORK/prog"
[ "$(wc -l <"$WORK/prog")" = 3 ] || fail "the program did not report its waits: $(cat "$WORK/job.out")"

sync_json() { # PATH OUT
	"$CALLPATH" report "$1" --view sync --format json >"$2" 2>"$WORK/report.err" ||
		fail "report --view sync --format json $1: $(cat "$WORK/report.err")"
}
sync_json "$dir" "$WORK/dir.json"
run "$CALLPATH" report "$dir" --view sync --threshold 0
cp "$WORK/run.out" "$WORK/dir.txt"
run "$CALLPATH" analyze -q "$dir" -o "$WORK/a.db"
sync_json "$WORK/a.db" "$WORK/a.json"
mpi_run amp mpirun -np 2 "$CALLPATH" analyze --mpi -q "$dir" -o "$WORK/mpi.db"
sync_json "$WORK/mpi.db" "$WORK/mpi.json"
"$CALLPATH" report "$WORK/mpi.db" --view sync --format json --rank 1 >"$WORK/rank1.json" ||
	fail "report --view sync --rank 1"
json_assert "$WORK/rank1.json" "(d['objects'] and all(o['rank'] == 1 for o in d['objects']) and
    d['wait_ns'] == sum(o['wait_ns'] for o in d['objects']))" "--rank 1: $(cat "$WORK/rank1.json")"

python3 - "$WORK/prog" "$WORK/dir.txt" "$WORK/dir.json" "$WORK/a.json" "$WORK/mpi.json" <<'PY' ||
import json, re, sys
prog = []
for line in open(sys.argv[1]):
    head, tail = line.rstrip("\n").split("|")
    _, rank, pid, kind, name = head.split(" ", 4)
    secs, count = tail.split()
    prog.append((int(rank), int(pid), kind, name, float(secs), int(count)))
text = open(sys.argv[2]).read()
bad = []
for path in sys.argv[3:]:
    d = json.load(open(path))
    objs = {(o["pid"], o["kind"], o["name"]): o for o in d["objects"]}
    for rank, pid, kind, name, secs, count in prog:
        o = objs.get((pid, kind, name))
        if o is None:
            bad.append(f"{path}: no {kind} '{name}' in pid {pid}: {sorted(objs)}")
            continue
        rec = o["wait_ns"] / 1e9
        if o["waits"] != count or not -0.002 <= secs - rec <= max(0.15 * secs, 0.025):
            bad.append(f"{path}: {name}: {o['waits']} waits, {rec:.6f} s; the program "
                       f"measured {count} waits, {secs:.6f} s")
        if o["rank"] != rank:
            bad.append(f"{path}: {name}: rank {o['rank']}, the program's is {rank}")
        if kind == "mpi-recv" and (o["peer"], o["tag"]) not in ((1, 7), (0, 3)):
            bad.append(f"{path}: {name}: peer {o['peer']}, tag {o['tag']}")
        if not o["sites"] or "syncobj.c" not in (o["sites"][0]["site"] or ""):
            bad.append(f"{path}: {name}: call site {o['sites'][:1]}")
    for rank, pid, kind, name, secs, count in prog:
        if not re.search(r"\s%s\s+%s\s+\[rank %d, pid %d\]" % (kind, re.escape(name), rank, pid),
                         text):
            bad.append(f"text view: no line for {kind} {name} [rank {rank}, pid {pid}]")
if bad:
    print("\n".join(bad), file=sys.stderr)
    sys.exit(1)
PY
	fail "wrong MPI waits by object: $(cat "$WORK/dir.txt")"

# The search: rank 1 of the planted late sender waits in MPI_Recv on MPI_COMM_WORLD, tag 7,
# for rank 0.
ls=$CP_BUILD_DIR/bench/search/mpi-late-sender
require_built "$ls"
# Rank 0 runs under record, only rank 1 is searched (rank 0's own search, inserting its
# probes, could hold it between its send and the MPI_Bcast that ends the round, and rank 1
# would wait there instead). --libraries none: libc (hot in Open MPI's polling) would enter
# the code model, thousands of functions and loops whose reading took the whole 4 s under
# a load of 12 on 2 cores.
mpi_run search mpirun -np 1 "$CALLPATH" record -q -o "$WORK/r0" -- "$ls" 7 : \
	-np 1 "$CALLPATH" search -q --libraries none --hypotheses ExcessiveSyncWaiting \
	--after 0.3 --for 5 --format json -o "$WORK/s" -- "$ls" 7
json_assert "$WORK/s/search-rank1.json" "(any(b['kind'] == 'syncobject' and
    b['focus'] == '/SyncObject/mpi-recv/MPI_COMM_WORLD tag 7 from rank 0' and
    b['function'] == 'await_block' for b in d['bottlenecks']))" \
	"rank 1's bottlenecks: $(head -c 3000 "$WORK/s/search-rank1.json")"
note "ok"
