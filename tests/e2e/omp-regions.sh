#!/bin/bash
# OpenMP (GCC, libgomp): the workers' samples of a parallel region hang under the calling
# context of the region, never under a thread root. omp-regions imbalance: region_work's
# region runs twice, from caller_a and from caller_b, on 3 threads, thread 0 (the master)
# doing 3x the work of the others. Checked in the database (docs/internals/omp.md):
#  - every scope of the outlined function region_work._omp_fn.0 lies under
#    main > caller_X > region_work, for both callers (two contexts), and holds the samples
#    of all 3 threads (the same path in every thread's tree);
#  - nothing of the outlined function is left under start_thread/clone (a thread root);
#  - the per-thread statistics of each region show the planted imbalance: max/mean about
#    1.8 (3:1:1), the max held by the master's profile.
. "$(dirname "$0")/lib.sh"

require_built "$CALLPATH"
python3 -c "import sqlite3" 2>/dev/null || skip "python3 has no sqlite3 module"

check_build() { # workload
	local wl=$1 m=$WORK/m-$(basename "$1")
	require_built "$wl"
	OMP_NUM_THREADS=3 run "$CALLPATH" record -o "$m" -- "$wl" imbalance 250
	run "$CALLPATH" analyze -q "$m"
	python3 - "$m/callpath.db" <<'PY' || fail "$(basename "$wl"): regions are not in their calling context"
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
metric = db.execute("select id from metric where name = 'cputime'").fetchone()[0]
scopes = {r[0]: r[1:] for r in db.execute(
    "select id, parent, kind, procedure from scope_names")}
def ancestors(s):
    out = []
    while s is not None and s in scopes:
        s = scopes[s][0]
        if s is not None and s in scopes and scopes[s][1] == 'procedure':
            out.append(scopes[s][2])
    return out
fn = [s for s, (p, k, name) in scopes.items()
      if k == 'procedure' and name == 'region_work._omp_fn.0']
vals = {r[0]: r[1:] for r in db.execute(
    "select scope, incl_sum, incl_mean, incl_max, incl_argmax, incl_count from value "
    "where metric = ?", (metric,))}
total = sum(vals[s][0] for s in fn if s in vals)
assert total > 0, "no samples in the outlined function"
master = db.execute("select id from profile where tidx = 0").fetchone()[0]
seen = set()
for s in fn:
    if s not in vals:
        continue
    anc = ancestors(s)
    for bad in ('start_thread', '__clone3', 'clone3', 'clone'):
        assert bad not in anc, f"outlined function under a thread root: {list(reversed(anc))}"
    assert anc[:1] == ['region_work'] and 'main' in anc, \
        f"outlined function not under main > ... > region_work: {list(reversed(anc))}"
    caller = anc[1]
    assert caller in ('caller_a', 'caller_b'), f"region_work called from {caller}"
    incl, mean, mx, argmax, count = vals[s]
    print(f"{caller} > region_work > region_work._omp_fn.0: {incl / 1e6:.0f} ms on {count} "
          f"threads, max/mean {mx / mean:.2f}, max in profile {argmax} (master {master})")
    assert count == 3, f"{count} threads under {caller}'s region, expected 3"
    assert 1.4 <= mx / mean <= 2.4, f"max/mean {mx / mean:.2f}, expected about 1.8"
    assert argmax == master, "the thread with the most work is not the master (thread 0)"
    seen.add(caller)
assert seen == {'caller_a', 'caller_b'}, f"contexts found: {seen}, expected both callers"
PY
	note "ok: $(basename "$wl")"
}

check_build "$CP_WORKLOADS/omp-regions.O2"
check_build "$CP_WORKLOADS/omp-regions.O0"
