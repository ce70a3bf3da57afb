"""Runs `callpath search` ($CALLPATH) on a program of several processes and checks its
result (tests/e2e/search-wrapper.sh, search-fork.sh, search-exec.sh): the process searched
(the K-th search, default the last, or each) is the workload's, its top 3 bottlenecks hold
compute's hot loop, whose focus names that process (/Machine/HOST/PID), and search.json
and the database's search table hold the same graph. The search's stderr is in DIR.err.

Usage: search-procs-check.py DIR PROGRAM_BASENAME[,...] [--search K|all] [--pid PID]
       [--min-searches N] [--expect PYTHON-EXPR-OVER-d] -- COMMAND [ARGS...]"""
import argparse
import json
import os
import sqlite3
import subprocess
import sys

SRC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "workloads",
                   "search-loops.c")
HOT = [i + 1 for i, line in enumerate(open(SRC)) if "loop 3: the hot one" in line][0]

ap = argparse.ArgumentParser()
ap.add_argument("dir")
ap.add_argument("program")
ap.add_argument("--search", default="-1", help="the search checked: its index, or 'all'")
ap.add_argument("--pid", type=int)
ap.add_argument("--min-searches", type=int, default=1)
ap.add_argument("--expect", help="a Python expression over the result d that must hold")
ap.add_argument("command", nargs="+")
a = ap.parse_args()


def fail(msg):
    print("FAIL: " + msg, file=sys.stderr)
    sys.exit(1)


with open(a.dir + ".err", "w") as err:
    rc = subprocess.run([os.environ["CALLPATH"], "search", "--hypotheses", "CPUBound",
                         "--after", "0.3", "--for", "12", "--kill", "-o", a.dir, "--"]
                        + a.command, stdout=subprocess.DEVNULL, stderr=err).returncode
if rc:
    fail("callpath search exited %d: %s" % (rc, open(a.dir + ".err").read()))

d = json.load(open(a.dir + "/search.json"))
if a.expect and not eval(a.expect):
    fail("not so: %s: %s" % (a.expect, json.dumps(d)[:1500]))
# a result without "processes" (a search that knows of one process only) is that process's
procs = d.get("processes") or [{"pid": d["pid"], "program": d["program"], "command": None,
                                 "reason": None, "first_node": 0, "nodes": len(d["nodes"])}]
if len(procs) < a.min_searches:
    fail("%d processes searched, expected at least %d: %s" % (len(procs), a.min_searches, procs))
def check(p):
    """Process p's search: the program, the pid, the hot loop in its top 3."""
    if not any(p["program"].endswith("/" + name) for name in a.program.split(",")):
        fail("searched %s (%s), not %s: %s" % (p["program"], p["command"], a.program,
                                               p["reason"]))
    if a.pid is not None and p["pid"] != a.pid:
        fail("searched process %d, not %d" % (p["pid"], a.pid))
    ids = range(p["first_node"], p["first_node"] + p["nodes"])
    mine = [b for b in d["bottlenecks"] if b["id"] in ids]
    hot = [b for b in mine[:3] if b["kind"] == "loop" and b["function"] == "compute"
           and b["line"] in (HOT, HOT + 1)]
    if not hot:
        fail("the hot loop (line %d) is not in process %d's top 3: %s" %
             (HOT, p["pid"], [(b["focus"], b["value"]) for b in mine[:5]]))
    if "/Machine/" not in hot[0]["focus"] or not hot[0]["focus"].endswith("/%d" % p["pid"]):
        fail("the focus does not name the process: " + hot[0]["focus"])
    if hot[0].get("pid") != p["pid"]:
        fail("node pid %d, process %d" % (hot[0]["pid"], p["pid"]))
    print("process %d (%s): %s; hot loop %s %.1f%%" %
          (p["pid"], p["command"], p["reason"], hot[0]["focus"], 100 * hot[0]["value"]))


for p in procs if a.search == "all" else [procs[int(a.search)]]:
    check(p)
if [n["id"] for n in d["nodes"]] != list(range(len(d["nodes"]))):
    fail("node ids not numbered on across the searches")
db = sqlite3.connect(a.dir + "/callpath.db")
rows = db.execute("SELECT id, state, focus FROM search ORDER BY id").fetchall()
if [(n["id"], n["state"], n["focus"]) for n in d["nodes"]] != rows:
    fail("the search table differs from search.json")
ranked = db.execute("SELECT id FROM search WHERE rank > 0 ORDER BY rank").fetchall()
if [r[0] for r in ranked] != [b["id"] for b in d["bottlenecks"]]:
    fail("the search table's ranks differ from search.json's bottlenecks")
