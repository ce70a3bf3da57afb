#!/usr/bin/env python3
"""Checks the OpenMP metrics of a 2-thread omp-regions imbalance run (omp-regions.sh).

omp-wait.py DB [strict|main]

For each 'parallel region in region_work' scope (one per caller): omp-work on both
threads, max/mean about 1.5 (the master does 3x the worker's work) held by the master;
the worker's waits (omp-wait) in the region, most of them the worker's; 99.5 % of the
unwinds complete (a third of the samples are in the runtime's barrier). strict (libgomp):
the worker's wait after the outlined function returned is inside the region too, and
97 % of the time after start-up is under main (no thread root holds more). main (libomp):
that last check alone (its end-barrier wait is under the region's call site, not in the
region's scope: OMPT does not name the outlined function)."""
import os
import sqlite3
import sys
from importlib import import_module

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

db = sqlite3.connect(sys.argv[1])
strict = len(sys.argv) > 2 and sys.argv[2] == 'strict'
under_main = strict or (len(sys.argv) > 2 and sys.argv[2] == 'main')
metric = {n: i for i, n in db.execute("select id, name from metric")}
for m in ('omp-work', 'omp-wait'):
    assert m in metric, f"no {m} metric: {sorted(metric)}"
master = db.execute("select id from profile where tidx = 0").fetchone()[0]
regions = [r[0] for r in db.execute(
    "select id from scope_names where kind = 'procedure' and procedure = "
    "'parallel region in region_work'")]
assert len(regions) == 2, f"{len(regions)} region scopes, expected one per caller"


def stat(scope, name):
    return db.execute("select incl_sum, incl_mean, incl_max, incl_argmax, incl_count from value "
                      "where scope = ? and metric = ?", (scope, metric[name])).fetchone()


errors = []
for s in regions:
    work, wait = stat(s, 'omp-work'), stat(s, 'omp-wait')
    print(f"region scope {s}: work {work[0] / 1e6:.0f} ms on {work[4]} threads, max/mean "
          f"{work[2] / work[1]:.2f} in profile {work[3]}; omp-wait "
          f"{(wait[0] if wait else 0) / 1e6:.0f} ms, max in profile {wait[3] if wait else '-'}")
    if work[4] != 2 or not 1.2 <= work[2] / work[1] <= 1.8 or work[3] != master:
        errors.append(f"region {s}: work imbalance is not the planted 3:1 held by the master")
    if strict and (not wait or wait[3] == master):
        errors.append(f"region {s}: the worker's wait is not in the region")
if under_main:
    share = import_module("omp-share").main_share(db, metric['cputime'])
    print(f"under main: {100 * share:.1f} % of cputime after start-up")
    if share < 0.97:
        errors.append(f"only {100 * share:.1f} % of the time is under main")
# unwinds through the OpenMP runtime's barrier and task code (the unwinder's own status,
# before the region's context is spliced on)
c, p, f = db.execute("select sum(unwind_complete), sum(unwind_partial), sum(unwind_failed) "
                     "from profile").fetchone()
print(f"unwinds: {c} complete, {p} partial, {f} failed")
if c < 0.995 * (c + p + f):
    errors.append(f"only {100 * c / (c + p + f):.2f} % of the unwinds are complete")
for e in errors:
    print("FAIL:", e, file=sys.stderr)
sys.exit(1 if errors else 0)
