#!/usr/bin/env python3
"""Side-by-side correctness check: the same workload profiled by gperftools, perf
(--call-graph dwarf) and callpath; the top procedures by inclusive share from each, and a
flag where the tools disagree by more than --tolerance percentage points.

usage: compare.py [--bin DIR] [--callpath EXE [--callpath-rt SO]] [--top N] [--tolerance PP]
                  WORKLOAD [ARGS...]

Inclusive shares count a recursive procedure once per sample in every tool:
gperftools `google-pprof --text --cum` (cum %), perf `report --children` (Children %), and
callpath `report --view bottom-up --format json` (top-level nodes: one per procedure).
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

PROFILER = "/usr/lib/x86_64-linux-gnu/libprofiler.so"


def run(cmd, env=None):
    return subprocess.run(cmd, env=env, capture_output=True, text=True, check=True).stdout


def norm(name):
    """Procedure names as the tools print them differ only in decorations."""
    name = re.sub(r"\s*\(inlined\)$", "", name)
    name = re.sub(r"(\.(constprop|isra|part|cold)(\.\d+)?)+$", "", name)  # gcc clones
    name = re.sub(r"^__GI_", "", name)
    # glibc 2.36 exports __libc_start_main as an alias of __libc_start_main_impl; tools
    # pick either name for the same address
    name = "__libc_start_main" if name == "__libc_start_main_impl" else name
    return name


def key(name):
    """The same symbol is exported with and without leading underscores (__clone3, clone3):
    match names on the rest."""
    return name.lstrip("_") or name


def gperf_shares(prog, args, tmp):
    prof = os.path.join(tmp, "gp.prof")
    env = dict(os.environ, LD_PRELOAD=PROFILER, CPUPROFILE=prof, CPUPROFILE_FREQUENCY="1000")
    run([prog] + args, env)
    out = run(["google-pprof", "--text", "--cum", prog, prof])
    incl, excl = {}, {}
    for line in out.splitlines():
        m = re.match(r"\s*\d+\s+([\d.]+)%\s+[\d.]+%\s+\d+\s+([\d.]+)%\s+(\S.*)$", line)
        if m:
            name = norm(m.group(3))
            incl[name] = max(incl.get(name, 0), float(m.group(2)))
            excl[name] = excl.get(name, 0) + float(m.group(1))
    return incl, excl


def perf_shares(prog, args, tmp):
    data = os.path.join(tmp, "perf.data")
    run(["perf", "record", "-q", "--no-bpf-event", "-e", "cpu-clock", "-F", "1000",
         "--call-graph", "dwarf", "-o", data, prog] + args)
    out = run(["perf", "report", "-i", data, "--children", "--sort", "symbol", "--stdio",
               "-g", "none"])
    incl, excl = {}, {}
    for line in out.splitlines():
        m = re.match(r"\s*([\d.]+)%\s+([\d.]+)%\s+\[\.\]\s+(\S.*?)\s+-\s+-\s*$", line)
        if m:
            name = norm(m.group(3))
            incl[name] = max(incl.get(name, 0), float(m.group(1)))
            excl[name] = excl.get(name, 0) + float(m.group(2))
    return incl, excl


def callpath_shares(exe, prog, args, tmp, rt=None):
    """rt: record by preloading the runtime directly instead of `callpath record`."""
    mdir = os.path.join(tmp, "cp")
    if rt:
        env = dict(os.environ, LD_PRELOAD=rt, CALLPATH_OUTPUT=mdir,
                   CALLPATH_EVENTS="cputime@1000000")
        run([prog] + args, env)
    else:
        run([exe, "record", "-o", mdir, "-e", "cputime@1000000", "--", prog] + args)
    doc = json.loads(run([exe, "report", mdir, "--view", "bottom-up", "--format", "json",
                          "--threshold", "0"]))
    nodes = doc["nodes"]
    root_ids = {n["id"] for n in nodes if n.get("parent") is None}  # the <total> node
    roots = [n for n in nodes if n.get("parent") in root_ids and n.get("kind") == "procedure"]
    incl, excl = {}, {}
    for n in roots:
        name = norm(n.get("name") or "?")
        incl[name] = incl.get(name, 0) + n["inclusive_pct"][0]
        excl[name] = excl.get(name, 0) + n["exclusive_pct"][0]
    return incl, excl


def table(results, top, tol):
    tools = list(results)
    shown, merged = {}, {}
    for t, (incl, excl) in results.items():  # re-key every tool's shares by key()
        mi, me = {}, {}
        for n, v in incl.items():
            k = key(n)
            shown.setdefault(k, n)
            mi[k] = max(mi.get(k, 0), v)
            me[k] = me.get(k, 0) + excl.get(n, 0)
        merged[t] = (mi, me)
    names = set()
    for incl, _ in merged.values():
        names |= {n for n, v in sorted(incl.items(), key=lambda kv: -kv[1])[:top]}
    order = sorted(names, key=lambda n: (-max(r[0].get(n, 0) for r in merged.values()), n))
    head = " | ".join(f"{t} incl % (self %)" for t in tools)
    lines = [f"| procedure | {head} | agree |", "|---|" + "---|" * (len(tools) + 1)]
    flags = 0
    for n in order:
        cells, vals = [], []
        for t in tools:
            incl, excl = merged[t]
            v = incl.get(n)
            vals.append(v or 0.0)
            cells.append("–" if v is None else f"{v:.1f} ({excl.get(n, 0):.1f})")
        row = f"| {shown[n]} | " + " | ".join(cells)
        if any(merged[t][0].get(n) is None for t in tools):
            lines.append(row + " | n/a (not named by every tool) |")
            continue
        ok = max(vals) - min(vals) <= tol
        flags += not ok
        verdict = "yes"
        if not ok:
            verdict = "**NO**"
            if "callpath" in tools:  # say whether callpath or the peers are the outlier
                cp = vals[tools.index("callpath")]
                peers = [(abs(v - cp), t) for t, v in zip(tools, vals) if t != "callpath"]
                d, t = min(peers)
                verdict += f" (callpath within {d:.1f} of {t})"
        lines.append(row + f" | {verdict} |")
    return "\n".join(lines), flags


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default="/tmp/cp-bench-overhead/bin")
    ap.add_argument("--callpath", default=os.environ.get("CALLPATH"))
    ap.add_argument("--callpath-rt", help="preload this runtime instead of callpath record")
    ap.add_argument("--top", type=int, default=8)
    ap.add_argument("--tolerance", type=float, default=5.0)
    ap.add_argument("workload")
    ap.add_argument("args", nargs="*")
    a = ap.parse_args()
    prog = os.path.join(a.bin, a.workload)
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        results["gperftools"] = gperf_shares(prog, a.args, tmp)
        results["perf dwarf"] = perf_shares(prog, a.args, tmp)
        if a.callpath:
            results["callpath"] = callpath_shares(a.callpath, prog, a.args, tmp,
                                                  a.callpath_rt)
    text, flags = table(results, a.top, a.tolerance)
    print(text)
    print(f"\n{flags} procedure(s) differ by more than {a.tolerance} points between tools.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
