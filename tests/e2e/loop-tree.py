#!/usr/bin/env python3
"""loop-tree.py DIR: one line per loop probe's node of a measurement directory, summed over
threads and contexts: FUNCTION <tab> HEADER-OFFSET <tab> iterations <tab> entries <tab> ns
(loop-iterations, loop-entries, loop-time). Reads the files with record-check.py (the
independent reader) and names functions with nm, as probe-tree.py does."""
import collections, glob, importlib.util, os, sys

def load(name):
    spec = importlib.util.spec_from_file_location(
        name.replace("-", "_"), os.path.join(os.path.dirname(os.path.abspath(__file__)), name + ".py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod

rc = load("record-check")

def main():
    d = sys.argv[1]
    pt = load("probe-tree")
    total = collections.OrderedDict()
    threads = rc.read_dir(d)[1]
    for proc in sorted(glob.glob(os.path.join(d, "*.proc"))):
        p = rc.read_proc(proc)
        metrics = [m["name"] for m in p["metrics"]]
        modules = {m["id"]: m["path"] for m in p["modules"]}
        it, en, tm = (metrics.index(n) for n in ("loop-iterations", "loop-entries", "loop-time"))
        for t in [t for t in threads if (t["pid"], t["gen"]) == (p["pid"], p["gen"])]:
            for parent, kind, module, offset, vals in t["nodes"]:
                if kind != 2 or not (vals[it] or vals[en]):
                    continue
                key = (pt.name_of(modules, module, offset), offset)
                a = total.setdefault(key, [0, 0, 0])
                a[0] += vals[it]; a[1] += vals[en]; a[2] += vals[tm]
    for (fn, off), (i, e, ns) in sorted(total.items()):
        print("%s\t0x%x\t%d\t%d\t%d" % (fn, off, i, e, ns))

main()
