#!/usr/bin/env python3
"""Checks where an OpenMP program's code landed in a callpath database (omp-*.sh).

omp-check.py DB FUNCTION CHAIN THREADS [IMBALANCE]

Every procedure scope named FUNCTION (an outlined region, a task, or code they call)
must have, as its nearest enclosing procedures, one of the chains of CHAIN
('a>b>c|x>y', outermost first, ending at FUNCTION's caller), with main further out and
no thread root (start_thread, clone) anywhere above it; every chain of CHAIN must occur
(a chain may itself be alternatives, 'a>b,a>b>c': one of them);
each instance must hold samples of THREADS profiles (threads). IMBALANCE (optional,
'lo:hi'): the instance's max/mean across threads lies in [lo, hi] and the max is the
first thread's (the master's). Prints one line per instance."""
import sqlite3
import sys

db_path, function, chains, threads = sys.argv[1:5]
imbalance = sys.argv[5] if len(sys.argv) > 5 else None
chains = [[a.split('>') for a in c.split(',')] for c in chains.split('|')]
threads = int(threads)
db = sqlite3.connect(db_path)
metric = db.execute("select id from metric where name = 'cputime'").fetchone()[0]
scopes = {r[0]: r[1:] for r in db.execute("select id, parent, kind, procedure from scope_names")}
vals = {r[0]: r[1:] for r in db.execute(
    "select scope, incl_sum, incl_mean, incl_max, incl_argmax, incl_count from value "
    "where metric = ?", (metric,))}
master = db.execute("select id from profile where tidx = 0").fetchone()[0]


def procedures_above(s):
    out = []  # nearest first
    s = scopes[s][0]
    while s is not None and s in scopes:
        if scopes[s][1] == 'procedure':
            out.append(scopes[s][2])
        s = scopes[s][0]
    return out


found = set()
errors = []
for s, (parent, kind, name) in scopes.items():
    if kind != 'procedure' or name != function or s not in vals:
        continue
    above = procedures_above(s)
    path = ' > '.join(list(reversed(above)) + [function])
    incl, mean, mx, argmax, count = vals[s]
    print(f"{path}: {incl / 1e6:.0f} ms on {count} threads, max/mean {mx / mean:.2f}, "
          f"max in profile {argmax} (master {master})")
    roots = [r for r in ('start_thread', '__clone3', 'clone3', 'clone') if r in above]
    if roots:
        errors.append(f"under a thread root: {path}")
        continue
    match = [i for i, c in enumerate(chains)
             if any(above[:len(a)] == list(reversed(a)) for a in c)]
    if not match or 'main' not in above:
        errors.append(f"not under main > ... > {'|'.join(sys.argv[3:4])}: {path}")
        continue
    found.add(match[0])
    if count != threads:
        errors.append(f"{count} threads in {path}, expected {threads}")
    if imbalance:
        lo, hi = map(float, imbalance.split(':'))
        if not lo <= mx / mean <= hi:
            errors.append(f"max/mean {mx / mean:.2f} in {path}, expected {lo}-{hi}")
        if argmax != master:
            errors.append(f"the most work in {path} is not the master's")
missing = [','.join('>'.join(a) for a in c) for i, c in enumerate(chains) if i not in found]
if missing:
    errors.append(f"no {function} under {', '.join(missing)}")
for e in errors:
    print("FAIL:", e, file=sys.stderr)
sys.exit(1 if errors else 0)
