#!/usr/bin/env python3
"""probe-tree.py DIR [--expect 'CALLER > ... > FUNCTION=COUNT']...

Reads a measurement directory straight from the files (src/format/measure.h) and prints
one line per probed context: TIDX <tab> caller > ... > function <tab> calls <tab> ns
(probe-time, or the metric named by $PROBE_TREE_METRIC).
The path is the functions of the call sites from the outermost frame, then the probed
function (its PC node); symbols come from nm. Used by tests/e2e/probe-*.sh so the checks
do not depend on the report's rendering. With --expect, checks instead that the calls of
the contexts whose path ends with the given functions (summed over threads) equal COUNT,
and exits 1 when one does not."""
import bisect, glob, importlib.util, os, subprocess, sys

# The measurement files are parsed by the one independent reader, record-check.py (thread
# files and threads packed into the process file).
_spec = importlib.util.spec_from_file_location(
    "record_check", os.path.join(os.path.dirname(os.path.abspath(__file__)), "record-check.py"))
rc = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(rc)

def symbols(path, cache={}):
    if path not in cache:
        addrs = []
        out = ""
        for args in (["nm", "--defined-only"], ["nm", "-D", "--defined-only"]):
            try:
                out = subprocess.run(args + [path], capture_output=True, text=True).stdout
            except OSError:
                out = ""
            if out.strip():
                break
        for line in out.splitlines():
            parts = line.split()
            if len(parts) == 3 and parts[1] in "tTiW":
                addrs.append((int(parts[0], 16), parts[2].split("@")[0]))
        addrs.sort()
        cache[path] = ([a for a, _ in addrs], [n for _, n in addrs])
    return cache[path]

def name_of(modules, module, offset):
    if module not in modules:
        return "?"
    keys, names = symbols(modules[module])
    i = bisect.bisect_right(keys, offset) - 1
    return names[i] if i >= 0 else "?"

def lines(d):
    out = []
    threads = rc.read_dir(d)[1]
    for proc in sorted(glob.glob(os.path.join(d, "*.proc"))):
        p = rc.read_proc(proc)
        metrics = [m["name"] for m in p["metrics"]]
        modules = {m["id"]: m["path"] for m in p["modules"]}
        ci = metrics.index("calls")
        ti = metrics.index(os.environ.get("PROBE_TREE_METRIC", "probe-time"))
        for t in [t for t in threads if (t["pid"], t["gen"]) == (p["pid"], p["gen"])]:
            tidx, nodes = t["tidx"], t["nodes"]
            for i, (parent, kind, module, offset, vals) in enumerate(nodes):
                if kind != 2 or not vals[ci]:
                    continue
                path = [name_of(modules, module, offset)]
                p = parent
                while p != 0xffffffff and p < len(nodes) and nodes[p][1] != 0:
                    pk = nodes[p]
                    path.append(name_of(modules, pk[2], pk[3] - 1) if pk[1] == 1 else
                                "<partial>" if pk[1] == 3 else "?")
                    p = pk[0]
                out.append((tidx, " > ".join(reversed(path)), vals[ci], vals[ti]))
    return out

def main():
    found = lines(sys.argv[1])
    expects = sys.argv[2:]
    if not expects:
        for l in found:
            print("%d\t%s\t%d\t%d" % l)
        return 0
    bad = 0
    for e in expects:
        if e == "--expect":
            continue
        suffix, count = e.rsplit("=", 1)
        got = sum(l[2] for l in found if l[1] == suffix or l[1].endswith(" > " + suffix))
        if got != int(count):
            print("expected %s calls of '%s', found %d" % (count, suffix, got), file=sys.stderr)
            bad = 1
    if bad:
        for l in found:
            print("%d\t%s\t%d\t%d" % l, file=sys.stderr)
    return bad

if __name__ == "__main__":
    sys.exit(main())
