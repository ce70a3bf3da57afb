#!/bin/bash
# threads.O2 3: three workers, the first doing 3x the work of the others. After callpath
# analyze, the worker frame's statistics over the thread profiles show max/min of about 3,
# the max held by the busiest thread, and the sum equal to the per-profile values' total.
. "$(dirname "$0")/lib.sh"

require_built "$CALLPATH"
WL=$CP_WORKLOADS/threads.O2
require_built "$WL"
python3 -c "import sqlite3" 2>/dev/null || skip "python3 has no sqlite3 module"


run "$CALLPATH" record -o "$WORK/m" -- "$WL" 3
run "$CALLPATH" analyze -q "$WORK/m"
python3 - "$WORK/m/callpath.db" <<'PY' || fail "per-thread statistics of worker are wrong"
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
metric = db.execute("select id from metric where name = 'cputime'").fetchone()[0]
nprof = db.execute("select count(*) from profile").fetchone()[0]
assert nprof >= 4, f"expected main + 3 worker profiles, found {nprof}"
rows = db.execute("""select s.id, v.incl_sum, v.incl_min, v.incl_max, v.incl_mean, v.incl_argmax,
        v.incl_count from scope s join procedure p on p.id = s.proc
        join value v on v.scope = s.id and v.metric = ?
        where p.name = 'worker' and s.kind = (select id from scope_kind where name = 'procedure')""",
    (metric,)).fetchall()
assert len(rows) == 1, f"worker should be one frame (one call path), found {rows}"
sid, total, lo, hi, mean, argmax, count = rows[0]
print(f"worker: sum {total:.0f} min {lo:.0f} max {hi:.0f} over {count} threads, argmax profile {argmax}")
assert count == 3, f"worker ran in {count} profiles, expected 3"
ratio = hi / lo
assert 2.2 <= ratio <= 4.0, f"max/min {ratio:.2f}, expected about 3"
assert abs(mean - total / count) <= 1e-6 * total, "mean is not sum/count"
# the busiest thread: the worker profile with the most CPU time holds the max
busiest = db.execute("""select id from profile where tidx > 0 order by cpu_ns desc limit 1""").fetchone()[0]
cpu = dict(db.execute("select id, cpu_ns from profile"))
assert cpu[argmax] > 0, "argmax names a profile without CPU time"
assert argmax == busiest or cpu[argmax] >= 0.9 * cpu[busiest], \
    f"argmax profile {argmax} (cpu {cpu[argmax]}) is not the busiest thread {busiest} (cpu {cpu[busiest]})"
assert cpu[argmax] > 2 * min(c for p, c in cpu.items() if p != argmax and c > 0.1 * cpu[argmax]), \
    "the argmax thread did not do clearly more work than the others"
PY
note "ok"
