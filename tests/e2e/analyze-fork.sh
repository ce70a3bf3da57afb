#!/bin/bash
# forkexec.O2 loopinline.O2: the parent runs parent_work, its fork child child_work and then
# execs loopinline (compute). callpath analyze merges the three process images into one
# database: one profile each, flagged fork child / exec'd, and every workload procedure.
. "$(dirname "$0")/lib.sh"

require_built "$CALLPATH"
WL=$CP_WORKLOADS/forkexec.O2
require_built "$WL" "$CP_WORKLOADS/loopinline.O2"
python3 -c "import sqlite3" 2>/dev/null || skip "python3 has no sqlite3 module"


run "$CALLPATH" record -o "$WORK/m" -- "$WL" "$CP_WORKLOADS/loopinline.O2" 800
nproc=$(ls "$WORK/m"/*.proc | wc -l)
[ "$nproc" -ge 3 ] || fail "expected 3 process files (parent, child, exec'd image), found $nproc"
run "$CALLPATH" analyze "$WORK/m"
grep -q "3 processes" "$WORK/run.out" || fail "summary does not count 3 processes: $(cat "$WORK/run.out")"
python3 - "$WORK/m/callpath.db" <<'PY' || fail "the processes are not merged as expected"
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
meta = dict(db.execute("select key, value from meta"))
assert meta["nprocs"] == "3", meta
assert meta["nforked"] == "1" and meta["nexeced"] == "1", meta
profs = db.execute("select pid, gen, flags, command from profile").fetchall()
pids = {p[0] for p in profs}
assert len(pids) == 2, f"expected two pids (parent, child), got {profs}"
FORK_CHILD, EXECED = 1, 2
assert any(f & FORK_CHILD for _, _, f, _ in profs), f"no profile flagged fork child: {profs}"
execd = [p for p in profs if p[2] & EXECED]
assert execd and execd[0][1] == 1 and "loopinline.O2" in execd[0][3], f"exec'd image: {profs}"
metric = db.execute("select id from metric where name = 'cputime'").fetchone()[0]
def proc_incl(name):
    return db.execute("""select coalesce(sum(v.incl_sum), 0), max(v.incl_count) from scope s
        join procedure p on p.id = s.proc join value v on v.scope = s.id and v.metric = ?
        where p.name = ? and s.kind = 1""", (metric, name)).fetchone()
for name in ("parent_work", "child_work", "compute"):
    total, count = proc_incl(name)
    assert total > 0, f"{name} has no samples in the merged database"
    assert count == 1, f"{name} should be in exactly one profile, found {count}"
root = db.execute("select incl_sum from value where scope = 0 and metric = ?", (metric,)).fetchone()[0]
parts = sum(proc_incl(n)[0] for n in ("parent_work", "child_work", "compute"))
assert parts <= root * 1.0001, "procedures hold more than the whole program"
assert parts >= 0.8 * root, f"the three workloads hold only {parts / root:.0%} of the samples"
PY
note "ok"
